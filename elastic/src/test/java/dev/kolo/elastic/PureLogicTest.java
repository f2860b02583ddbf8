package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The value codec of a sync and the blacklist's back-off policy. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class PureLogicTest {
    @Test
    void valuesRoundTrip() {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("epoch", 3L);
        v.put("lr", 0.125);
        v.put("nan", Double.NaN);
        v.put("name", "résumé ✓");
        ValueCodec.Decoded d = ValueCodec.decode(ValueCodec.encode(42, v));
        assertEquals(42, d.commits());
        assertEquals(v, d.values());
        byte[] bytes = ValueCodec.encode(1, v);
        assertThrows(IllegalStateException.class, () -> ValueCodec.decode(java.util.Arrays.copyOf(bytes, bytes.length - 1)));
        byte[] longer = java.util.Arrays.copyOf(bytes, bytes.length + 1);
        assertThrows(IllegalStateException.class, () -> ValueCodec.decode(longer));
    }

    @Test
    void forgedLengthsAndCountsFromAnotherRankAreRefusedBeforeAllocating() {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1 + 8 + 4 + 2 + 1 + 1 + 4);
        b.put((byte) 1).putLong(1).putInt(1).putShort((short) 1).put((byte) 'x').put((byte) 'S')
                .putInt(Integer.MAX_VALUE); // a 2 GiB string promised, nothing follows
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ValueCodec.decode(b.array()));
        assertTrue(e.getMessage().contains("claims 2147483647 bytes"), e.getMessage());
        java.nio.ByteBuffer negative = java.nio.ByteBuffer.allocate(b.capacity()).put(b.array()).putInt(17, -1);
        assertThrows(IllegalStateException.class, () -> ValueCodec.decode(negative.array()));
        java.nio.ByteBuffer count = java.nio.ByteBuffer.allocate(13).put((byte) 1).putLong(1).putInt(Integer.MAX_VALUE);
        assertTrue(assertThrows(IllegalStateException.class, () -> ValueCodec.decode(count.array())).getMessage()
                .contains("count"));
    }

    @Test
    void backOffDoublesThenBlacklists() {
        Blacklist.Policy p = new Blacklist.Policy(4, Duration.ofSeconds(5), Duration.ofSeconds(12), Duration.ofMinutes(10));
        long t = 1_000_000;
        Blacklist.Record r = Blacklist.next(null, t, p);
        assertEquals(1, r.failures());
        assertTrue(Blacklist.refusal("w", r, t, p).isEmpty(), "a first failure costs nothing");
        r = Blacklist.next(r, t, p);
        assertTrue(Blacklist.refusal("w", r, t + 4_000, p).orElseThrow().contains("backing off"));
        assertTrue(Blacklist.refusal("w", r, t + 5_001, p).isEmpty());
        r = Blacklist.next(r, t, p);
        assertEquals(10_000, Blacklist.cooldownMillis(r.failures(), p));
        r = Blacklist.next(r, t, p);
        assertTrue(Blacklist.refusal("w", r, t + 60_000, p).orElseThrow().contains("blacklisted"));
        assertEquals(12_000, Blacklist.cooldownMillis(9, p), "capped");
        // Failures older than the window are forgotten.
        assertTrue(Blacklist.refusal("w", r, t + 11 * 60_000, p).isEmpty());
        assertEquals(1, Blacklist.next(r, t + 11 * 60_000, p).failures());
        assertEquals(r.format(), Blacklist.Record.parse(r.format()).format());
    }
}
