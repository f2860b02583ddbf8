package dev.kolo.kernels;

/** Run in a child JVM by {@link SelectionTest}: prints the selected kernels, or the error. */
public final class SelectionProbe {

    private SelectionProbe() {
    }

    public static void main(String[] args) {
        try {
            System.out.println("selected " + Kernels.get().name());
        } catch (IllegalStateException e) {
            System.out.println("error " + e.getMessage());
            System.exit(3);
        }
    }
}
