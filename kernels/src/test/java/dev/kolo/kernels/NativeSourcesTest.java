package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every change of the native sources comes with a new {@link NativeKernels#ABI_VERSION}, which names the library's
 * file: JavaCPP's cache keeps a library by the jar's name and the file's size and time stamp, which a reproducible
 * build does not change, so a rebuilt library under an old name could be served stale.
 */
class NativeSourcesTest {

    /** The digest of {@code src/main/cpp} that goes with the build number in {@link NativeKernels#ABI_VERSION}. */
    private static final String SOURCES_OF_BUILD_2 = "90e2d0fd3c32051a38a6b426b40bfbd2aadb5fb8d4b6386cb2164d81559e5bfc";

    @Test
    void theSourcesAreThoseOfTheBuildInTheLibrarysName() throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        List<Path> files;
        try (Stream<Path> s = Files.list(Path.of("src/main/cpp"))) {
            files = s.sorted().toList();
        }
        for (Path f : files) {
            sha.update(f.getFileName().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            sha.update(Files.readAllBytes(f));
        }
        String digest = HexFormat.of().formatHex(sha.digest());
        assertEquals(2, NativeKernels.ABI_VERSION, "the build number changed: record its sources' digest here");
        assertEquals(SOURCES_OF_BUILD_2, digest, "src/main/cpp changed: raise NativeKernels.ABI_VERSION (and what "
                + "kolo_abi_version() returns) by one, then record the new digest here as its sources'");
    }
}
