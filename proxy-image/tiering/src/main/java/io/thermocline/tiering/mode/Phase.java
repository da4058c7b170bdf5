package io.thermocline.tiering.mode;

/**
 * Where the fleet is on the road between modes (the {@code phase} of the mode document, MODES contract),
 * and what every proxy does in it. Two phases refuse writes on tiered namespaces with a retryable error:
 * that is how a switch stays safe while some replica may still act on the previous mode (fail closed).
 * {@code Restoring} refuses every command on tiered namespaces while the archive is being replaced by a
 * backup (docs/backup.md): neither tier can answer for the restore point until {@code restore-sync} is done.
 */
public enum Phase {
    /** Shadow: the archive answers and takes every write; the archive follower keeps the fast tier in step. */
    SHADOWING("Shadowing", Reads.ARCHIVE, false),
    /** Towards tiered from an archive-authoritative phase: writes refused until the fast tier holds every archive write. */
    CUTTING_OVER("CuttingOver", Reads.ARCHIVE, true),
    /** Normal operation. */
    TIERED("Tiered", Reads.TIERED, false),
    /** Towards the archive: writes refused until the feeder has mirrored every fast-tier write; reads still tiered. */
    DRAINING("Draining", Reads.TIERED, true),
    /** The archive alone is current and takes every write; the fast tier is only kept in step. */
    DRAINED("Drained", Reads.ARCHIVE, false),
    /**
     * The archive is being restored from a backup: reads and writes on tiered namespaces refused (retryably), the
     * feeder held, the follower idle; {@code thermocline restore-sync} resets the fast tier and goes on to Drained.
     */
    RESTORING("Restoring", Reads.REFUSED, true);

    /** Which path a read on a tiered namespace takes. */
    public enum Reads { ARCHIVE, TIERED, REFUSED }

    private final String documentName;
    private final Reads reads;
    private final boolean writesRefused;

    Phase(String documentName, Reads reads, boolean writesRefused) {
        this.documentName = documentName;
        this.reads = reads;
        this.writesRefused = writesRefused;
    }

    public String documentName() {
        return documentName;
    }

    public Reads reads() {
        return reads;
    }

    public boolean writesRefused() {
        return writesRefused;
    }

    /** The archive takes the writes and the fast tier follows it (the archive follower runs). */
    public boolean archiveAuthoritative() {
        return this == SHADOWING || this == CUTTING_OVER || this == DRAINED;
    }

    public static Phase parse(String name) {
        for (Phase p : values()) {
            if (p.documentName.equals(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown mode phase '" + name + "'");
    }
}
