package dev.kolo.kernels;

/** Run in a child JVM by {@link SelectionTest}: prints the kernels chosen (by the argument, if any), or the error. */
public final class SelectionProbe {

    private SelectionProbe() {
    }

    public static void main(String[] args) {
        try {
            System.out.println("selected " + (args.length == 0 ? Kernels.get() : Kernels.configure(args[0], null)).name());
        } catch (IllegalStateException e) {
            System.out.println("error " + e.getMessage());
            System.exit(3);
        }
    }
}
