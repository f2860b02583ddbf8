package dev.kolo.runtime.train;

/** The argument checks that this package's builders share, with messages that name the argument and its value. */
final class Checks {
    private Checks() {
    }

    /** @throws IllegalArgumentException "NAME must be at least 1 (got VALUE)" if {@code value} is below 1 */
    static void atLeastOne(String name, long value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be at least 1 (got " + value + ")");
        }
    }

    /** @throws IllegalArgumentException "WHAT must be 0 or more (got VALUE)" if {@code value} is negative or NaN */
    static void notNegative(String what, double value) {
        if (!(value >= 0)) {
            throw new IllegalArgumentException(what + " must be 0 or more (got " + value + ")");
        }
    }
}
