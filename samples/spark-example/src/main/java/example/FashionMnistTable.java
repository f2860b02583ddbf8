package example;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Fashion-MNIST as a Spark table: one row an image, {@code label} (0 to 9) and {@code image} (784 grey levels, one
 * byte each), as a team keeps such data in its lake.
 */
final class FashionMnistTable {
    static final StructType SCHEMA = new StructType()
            .add("label", DataTypes.IntegerType, false)
            .add("image", DataTypes.BinaryType, false);
    private static final int PIXELS = 28 * 28;

    private FashionMnistTable() {
    }

    /**
     * Writes {@code images} and {@code labels} to Parquet at {@code table} unless a table is there already.
     *
     * @return whether it wrote
     */
    static boolean writeOnce(SparkSession spark, byte[][] set, Path table) {
        if (Files.isDirectory(table)) {
            return false;
        }
        byte[] images = set[0];
        byte[] labels = set[1];
        List<Row> rows = new ArrayList<>(labels.length);
        for (int i = 0; i < labels.length; i++) {
            byte[] image = new byte[PIXELS];
            System.arraycopy(images, i * PIXELS, image, 0, PIXELS);
            rows.add(RowFactory.create((int) labels[i], image));
        }
        spark.createDataFrame(rows, SCHEMA).repartition(8).write().mode(SaveMode.ErrorIfExists)
                .parquet(table.toString());
        return true;
    }

    /**
     * @return a partition's rows as {images, labels}, the sample's training's form, in an order of their own: a
     *     shuffle delivers a partition's rows in the order its map outputs arrive, and a stage Spark runs again
     *     must see them as the first attempt did, for the sampler's position to resume at the same image
     */
    static byte[][] toArrays(Iterator<Row> rows) {
        List<Row> all = new ArrayList<>();
        rows.forEachRemaining(all::add);
        all.sort(Comparator.<Row>comparingInt(r -> r.getInt(0)).thenComparing(r -> (byte[]) r.get(1),
                Arrays::compare));
        return toArrays(all);
    }

    static byte[][] toArrays(List<Row> rows) {
        byte[] images = new byte[rows.size() * PIXELS];
        byte[] labels = new byte[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            byte[] image = (byte[]) r.get(1);
            if (image.length != PIXELS) {
                throw new IllegalArgumentException("row " + i + ": an image of " + image.length + " bytes, not "
                        + PIXELS + " (28 x 28): the table is not Fashion-MNIST's");
            }
            System.arraycopy(image, 0, images, i * PIXELS, PIXELS);
            labels[i] = (byte) r.getInt(0);
        }
        return new byte[][] {images, labels};
    }

    /** @return the whole table, read on the driver (the test set: 10,000 images, 7.8 MB) */
    static byte[][] collect(Dataset<Row> table) {
        return toArrays(table.select("label", "image").collectAsList());
    }
}
