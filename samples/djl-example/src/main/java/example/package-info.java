/**
 * A DJL model trained with Kolo: {@link example.FashionMnistTraining} (the program) and
 * {@link example.FashionMnistFiles} (its data, read from local files). Copy the project and change both.
 */
package example;
