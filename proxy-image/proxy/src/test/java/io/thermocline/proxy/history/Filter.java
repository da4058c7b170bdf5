package io.thermocline.proxy.history;

/** The filter of a scan or a count, evaluated on a version the way the database evaluates it. */
sealed interface Filter {

    boolean matches(Doc doc);

    /** {@code {bucket: b}}: no age bound, so the proxy sends it to the archive. */
    record Bucket(int bucket) implements Filter {
        public boolean matches(Doc doc) {
            return doc.bucket() == bucket;
        }
    }

    /** {@code {ageField: {$gte: t}}}: the fast tier answers it once its coverage bound is at or below t. */
    record AgeAtLeast(long millis) implements Filter {
        public boolean matches(Doc doc) {
            return doc.age() >= millis;
        }
    }

    /** Every document (the final state). */
    record All() implements Filter {
        public boolean matches(Doc doc) {
            return true;
        }
    }
}
