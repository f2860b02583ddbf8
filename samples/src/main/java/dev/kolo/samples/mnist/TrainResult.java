package dev.kolo.samples.mnist;

/**
 * Outcome of a training run, equal on every rank.
 *
 * @param epochs        epochs trained (the last may be partial when --max-steps stopped it)
 * @param firstLoss     mean training loss over the ranks' first logging interval
 * @param lastLoss      mean training loss over the last logging interval
 * @param testAccuracy  accuracy on the test set after the last epoch
 * @param checksum      {@link ParameterChecksum} of the final parameters
 */
record TrainResult(int epochs, long steps, double firstLoss, double lastLoss, double testAccuracy, long checksum) {
}
