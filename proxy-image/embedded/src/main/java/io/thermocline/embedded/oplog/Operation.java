package io.thermocline.embedded.oplog;

/** What an oplog entry did; one entry per document for data changes. */
public enum Operation {
    INSERT("i"), UPDATE("u"), REPLACE("r"), DELETE("d"),
    /** Collection drop, database drop, rename: change streams see these. */
    DROP("drop"), DROP_DATABASE("dropDatabase"), RENAME("rename"),
    /** Other DDL (create, createIndexes, dropIndexes) replayed on secondaries, invisible to change streams. */
    COMMAND("c");

    private final String code;

    Operation(String code) {
        this.code = code;
    }

    public String code() {
        return code;
    }

    public static Operation byCode(String code) {
        for (Operation op : values()) {
            if (op.code.equals(code)) {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown oplog operation " + code);
    }
}
