package io.thermocline.proxy.cursor;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

/**
 * Cursor ids the proxy hands to clients: bit 63 clear (ids stay positive), bits 48-62 name the
 * proxy instance that owns the cursor, bits 0-47 count. Any replica of a fleet can tell from the
 * id alone which peer owns a cursor.
 */
public final class ProxyCursorIds {
    private static final long COUNTER_MASK = (1L << 48) - 1;
    private final int instanceBits;
    private final AtomicLong counter = new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 40));

    public ProxyCursorIds(String instanceId) {
        this.instanceBits = instanceBitsOf(instanceId);
    }

    /** The 15-bit owner tag of an instance id (stable across restarts of the same instance). */
    public static int instanceBitsOf(String instanceId) {
        CRC32 crc = new CRC32();
        crc.update(instanceId.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() & 0x7FFF);
    }

    public static int ownerOf(long cursorId) {
        return (int) ((cursorId >>> 48) & 0x7FFF);
    }

    public int instanceBits() {
        return instanceBits;
    }

    public boolean ownedHere(long cursorId) {
        return ownerOf(cursorId) == instanceBits;
    }

    public long next() {
        long n;
        do {
            n = counter.incrementAndGet() & COUNTER_MASK;
        } while (n == 0 && instanceBits == 0);
        return ((long) instanceBits << 48) | n;
    }
}
