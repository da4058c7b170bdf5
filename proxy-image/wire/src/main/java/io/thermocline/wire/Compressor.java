package io.thermocline.wire;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import org.xerial.snappy.Snappy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Optional;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/** The OP_COMPRESSED compressors, by the ids and names of the compression specification. */
public enum Compressor {
    NOOP(0, "noop"),
    SNAPPY(1, "snappy"),
    ZLIB(2, "zlib"),
    ZSTD(3, "zstd");

    private final int id;
    private final String wireName;

    Compressor(int id, String wireName) {
        this.id = id;
        this.wireName = wireName;
    }

    public int id() {
        return id;
    }

    /** The name used in {@code hello.compression}. */
    public String wireName() {
        return wireName;
    }

    public static Optional<Compressor> byName(String name) {
        return Arrays.stream(values()).filter(c -> c.wireName.equals(name)).findFirst();
    }

    public static Optional<Compressor> byId(int id) {
        return Arrays.stream(values()).filter(c -> c.id == id).findFirst();
    }

    public byte[] compress(byte[] data) {
        try {
            return switch (this) {
                case NOOP -> data;
                case SNAPPY -> Snappy.compress(data);
                case ZLIB -> deflate(data);
                case ZSTD -> Zstd.compress(data);
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Decompresses exactly {@code uncompressedSize} bytes; anything else is corrupt input.
     * The caller bounds {@code uncompressedSize} so a small message cannot inflate without limit.
     */
    public byte[] decompress(byte[] data, int uncompressedSize) {
        byte[] out;
        try {
            out = switch (this) {
                case NOOP -> data;
                case SNAPPY -> {
                    if (!Snappy.isValidCompressedBuffer(data) || Snappy.uncompressedLength(data) != uncompressedSize) {
                        throw new IllegalArgumentException("snappy data is corrupt or does not match the declared size");
                    }
                    yield Snappy.uncompress(data);
                }
                case ZLIB -> inflate(data, uncompressedSize);
                case ZSTD -> {
                    long declared = Zstd.getFrameContentSize(data);
                    if (declared >= 0 && declared != uncompressedSize) {
                        throw new IllegalArgumentException("zstd frame size " + declared + " does not match the declared size " + uncompressedSize);
                    }
                    byte[] buffer = new byte[uncompressedSize];
                    long n = Zstd.decompressByteArray(buffer, 0, uncompressedSize, data, 0, data.length);
                    if (Zstd.isError(n)) {
                        throw new IllegalArgumentException("zstd data is corrupt: " + Zstd.getErrorName(n));
                    }
                    yield n == uncompressedSize ? buffer : Arrays.copyOf(buffer, (int) n);
                }
            };
        } catch (IOException | ZstdException e) {
            throw new IllegalArgumentException(wireName + " data is corrupt: " + e.getMessage(), e);
        }
        if (out.length != uncompressedSize) {
            throw new IllegalArgumentException(wireName + " data decompressed to " + out.length + " bytes, the header declared " + uncompressedSize);
        }
        return out;
    }

    private static byte[] deflate(byte[] data) {
        Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION);
        try {
            deflater.setInput(data);
            deflater.finish();
            ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, data.length / 2));
            byte[] chunk = new byte[16 * 1024];
            while (!deflater.finished()) {
                out.write(chunk, 0, deflater.deflate(chunk));
            }
            return out.toByteArray();
        } finally {
            deflater.end();
        }
    }

    private static byte[] inflate(byte[] data, int uncompressedSize) {
        Inflater inflater = new Inflater();
        try {
            inflater.setInput(data);
            byte[] out = new byte[uncompressedSize];
            int n = 0;
            while (n < uncompressedSize && !inflater.finished()) {
                int read = inflater.inflate(out, n, uncompressedSize - n);
                if (read == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                    throw new IllegalArgumentException("zlib data ends before the declared size " + uncompressedSize);
                }
                n += read;
            }
            if (!inflater.finished()) {
                throw new IllegalArgumentException("zlib data is longer than the declared size " + uncompressedSize);
            }
            return n == uncompressedSize ? out : Arrays.copyOf(out, n);
        } catch (DataFormatException e) {
            throw new IllegalArgumentException("zlib data is corrupt: " + e.getMessage(), e);
        } finally {
            inflater.end();
        }
    }
}
