package dev.kolo.samples.bench.model;

/**
 * What one collective costs one rank in the α-β model, as counts (no times): the sequential steps, and for
 * the busiest rank the messages it sends, the bytes it sends and the bytes it reduces; and the bytes moved and
 * reduced one after the other on the critical path, which is what the time is made of. The path differs from
 * the busiest rank's share only where a step idles some ranks: the pre- and post-steps of the recursive
 * algorithms on a number of ranks that is not a power of two (each is on the path, no rank sends in both), and
 * the pipeline fill of a chain broadcast. Kept apart from the parameters ({@link CostModel}) so that the
 * counts can be checked by hand.
 *
 * @param steps sequential steps: each waits for a message of the one before, so each pays a latency α
 * @param messages messages the busiest rank sends (chunks of a pipelined algorithm counted one by one)
 * @param bytesSent bytes the busiest rank sends
 * @param bytesReduced bytes the busiest rank reduces (element bytes combined into its result)
 * @param pathBytes bytes sent one after the other on the critical path (each costs β)
 * @param pathReduced bytes reduced one after the other on the critical path (each costs γ)
 */
record CollectiveCost(int steps, long messages, double bytesSent, double bytesReduced, double pathBytes,
                      double pathReduced) {
    static final CollectiveCost NONE = new CollectiveCost(0, 0, 0, 0, 0, 0);

    /** Both one after the other: steps, messages and bytes add up. */
    CollectiveCost then(CollectiveCost next) {
        return new CollectiveCost(steps + next.steps, messages + next.messages, bytesSent + next.bytesSent,
                bytesReduced + next.bytesReduced, pathBytes + next.pathBytes, pathReduced + next.pathReduced);
    }
}
