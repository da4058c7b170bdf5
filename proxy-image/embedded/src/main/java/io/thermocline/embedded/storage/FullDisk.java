package io.thermocline.embedded.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.store.fs.FileBase;
import org.h2.store.fs.FilePath;
import org.h2.store.fs.FilePathWrapper;

/**
 * A disk that can fill up on demand, for fault tests: a {@link Storage#directory(Path, String)} through it
 * writes to the real directory until {@link #fill()}, then every write fails as a full disk's does
 * ({@code IOException: No space left on device}), until {@link #free()}. Each instance is its own H2 file
 * system, registered under a scheme of its own.
 */
public final class FullDisk {

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final String scheme = "fulldisk" + INSTANCES.incrementAndGet();
    private volatile boolean full;
    private final Map<String, AtomicInteger> refused = new ConcurrentHashMap<>();

    public FullDisk() {
        FilePath.register(new Wrapper(this));
    }

    /** The storage of a replica set kept in {@code directory} on this disk. */
    public Storage storage(Path directory) {
        return Storage.directory(directory, scheme + ":");
    }

    public void fill() {
        full = true;
    }

    public void free() {
        full = false;
    }

    /** How many writes to {@code file} (a name in the directory, e.g. {@code oplog.mv}) were refused, by any thread. */
    public int refusedWrites(String file) {
        AtomicInteger count = refused.get(file);
        return count == null ? 0 : count.get();
    }

    private void refuseIfFull(String file) throws IOException {
        if (full) {
            refused.computeIfAbsent(file, f -> new AtomicInteger()).incrementAndGet();
            throw new IOException("No space left on device");
        }
    }

    /** H2 instantiates wrappers reflectively for each path: the default constructor finds its disk by scheme. */
    public static final class Wrapper extends FilePathWrapper {
        private static final java.util.Map<String, FullDisk> DISKS = new java.util.concurrent.ConcurrentHashMap<>();
        private FullDisk disk;

        public Wrapper() {
        }

        Wrapper(FullDisk disk) {
            this.disk = disk;
            DISKS.put(disk.scheme, disk);
        }

        private FullDisk disk() {
            if (disk == null) {
                disk = DISKS.get(getScheme());
            }
            return disk;
        }

        @Override
        public String getScheme() {
            if (disk != null) {
                return disk.scheme;
            }
            String n = name == null ? "" : name;
            int colon = n.indexOf(':');
            return colon > 0 ? n.substring(0, colon) : "fulldisk";
        }

        @Override
        public FilePathWrapper wrap(FilePath base) {
            FilePathWrapper wrapped = super.wrap(base);
            if (wrapped instanceof Wrapper w) {
                w.disk = disk();
            }
            return wrapped;
        }

        @Override
        public FileChannel open(String mode) throws IOException {
            return new Channel(getBase().open(mode), disk(), fileName());
        }

        private String fileName() {
            String n = name == null ? "" : name;
            return n.substring(Math.max(n.lastIndexOf('/'), n.lastIndexOf('\\')) + 1);
        }

        @Override
        public java.io.OutputStream newOutputStream(boolean append) throws IOException {
            disk().refuseIfFull(fileName());
            return super.newOutputStream(append);
        }
    }

    private static final class Channel extends FileBase {
        private final FileChannel base;
        private final FullDisk disk;
        private final String file;

        Channel(FileChannel base, FullDisk disk, String file) {
            this.base = base;
            this.disk = disk;
            this.file = file;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return base.read(dst);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return base.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            disk.refuseIfFull(file);
            return base.write(src);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            disk.refuseIfFull(file);
            return base.write(src, position);
        }

        @Override
        public long position() throws IOException {
            return base.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            base.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return base.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            base.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            base.force(metaData);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return base.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            base.close();
        }
    }
}
