/**
 * The sample training job that {@code worker.jar} runs: an MLP trained data-parallel on Fashion-MNIST (IDX files),
 * elastic or fixed, with its settings, sharding, checksum and summary line. Depends on the runtime and elastic
 * modules only, never on the other samples packages.
 */
package dev.kolo.samples.mnist;
