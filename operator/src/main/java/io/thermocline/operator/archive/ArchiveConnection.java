package io.thermocline.operator.archive;

/**
 * How to reach the archive: its connection string and, optionally, a PEM CA bundle.
 * {@link #toString()} never shows the URI, which usually carries a password.
 */
public record ArchiveConnection(String uri, String caPem) {

    @Override
    public String toString() {
        return "ArchiveConnection[uri=***, ca=" + (caPem != null) + "]";
    }
}
