package dev.kolo.spark;

import java.io.Serializable;
import org.apache.spark.BarrierTaskContext;
import scala.collection.Iterator;
import scala.runtime.AbstractFunction1;

/** A barrier task that does what the distributor's tasks do with Spark alone: an allGather and a barrier. */
final class AllGatherOnly extends AbstractFunction1<Iterator<Object>, Iterator<Object>> implements Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<Object> apply(Iterator<Object> rows) {
        BarrierTaskContext ctx = BarrierTaskContext.get();
        ctx.allGather("x");
        ctx.barrier();
        return rows;
    }
}
