package dev.kolo.samples.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --log-dir}: private files in a private new directory, and no symbolic link followed. */
class RankOutputLogFilesTest {
    @TempDir
    Path tmp;

    private final ByteArrayOutputStream terminal = new ByteArrayOutputStream();

    private RankOutput output(Path dir) {
        return new RankOutput(new PrintStream(terminal, true, StandardCharsets.UTF_8), Set.of(), dir);
    }

    @Test
    void aNewDirectoryIs0700AndItsFiles0600WhateverTheUmask() throws Exception {
        Path dir = tmp.resolve("logs/run1");
        try (RankOutput out = output(dir)) {
            out.line(0, "hello");
        }
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
                dir.resolve("rank.0.log"))));
        assertEquals(List.of("hello"), Files.readAllLines(dir.resolve("rank.0.log")));
    }

    @Test
    void anOldReadableLogIsTruncatedAndMadePrivate() throws Exception {
        Path old = tmp.resolve("rank.2.log");
        Files.writeString(old, "last run\n");
        Files.setPosixFilePermissions(old, PosixFilePermissions.fromString("rw-r--r--"));
        try (RankOutput out = output(tmp)) {
            out.line(2, "this run");
        }
        assertEquals(List.of("this run"), Files.readAllLines(old));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(old)));
    }

    @Test
    void aPlantedSymbolicLinkIsNotFollowedAndIsNamed() throws Exception {
        Path precious = tmp.resolve("precious");
        Files.writeString(precious, "keep me\n");
        Path link = Files.createSymbolicLink(tmp.resolve("rank.1.log"), precious);
        try (RankOutput out = output(tmp)) {
            out.line(1, "overwrite?");
            out.line(0, "rank 0 still logs");
        }
        assertEquals(List.of("keep me"), Files.readAllLines(precious));
        String said = terminal.toString(StandardCharsets.UTF_8);
        assertTrue(said.contains(link + " is a symbolic link (to " + precious + "), which --log-dir does not "
                + "follow: remove it"), said);
        assertEquals(List.of("rank 0 still logs"), Files.readAllLines(tmp.resolve("rank.0.log")));
    }
}
