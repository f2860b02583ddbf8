package dev.kolo.samples.chaos;

/** A scenario cannot run on this machine (e.g. no root for network namespaces); the message says why. */
final class ChaosSkipped extends Exception {
    ChaosSkipped(String reason) {
        super(reason);
    }
}
