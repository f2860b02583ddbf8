package dev.kolo.kernels;

/** Reads a setting from a system property, falling back to an environment variable. */
final class Settings {

    private Settings() {
    }

    /** The property if set and non-blank, else the environment variable if set and non-blank, else null. */
    static String value(String property, String envVariable) {
        return pick(System.getProperty(property), System.getenv(envVariable));
    }

    static String pick(String propertyValue, String envValue) {
        if (propertyValue != null && !propertyValue.isBlank()) {
            return propertyValue.trim();
        }
        if (envValue != null && !envValue.isBlank()) {
            return envValue.trim();
        }
        return null;
    }
}
