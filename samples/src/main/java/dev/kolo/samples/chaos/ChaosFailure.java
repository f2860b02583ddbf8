package dev.kolo.samples.chaos;

/** A scenario's pass criterion was not met; the message is the table's detail. */
final class ChaosFailure extends Exception {
    ChaosFailure(String detail) {
        super(detail);
    }
}
