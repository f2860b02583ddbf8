/**
 * Kolo on Spark: {@link example.SparkTraining} (the program: a Spark driver) writes Fashion-MNIST to a Parquet table
 * once ({@link example.FashionMnistTable}) and trains the sample network on it, each rank a barrier task of one
 * stage with its partition of the table ({@link example.RankTraining}).
 */
package example;
