package io.thermocline.proxy.history;

/**
 * A document as the workload writes it. {@code value} is unique per write, so a read names the
 * write whose version it saw; {@code bucket} never changes (reads filtered on it go to the archive);
 * {@code age} (epoch millis of the age field) is moved across the window edge by updates.
 */
record Doc(int key, long value, long age, int bucket) {

    Doc withValue(long newValue) {
        return new Doc(key, newValue, age, bucket);
    }

    @Override
    public String toString() {
        return "{k" + key + " v" + value + " age" + age + " b" + bucket + "}";
    }
}
