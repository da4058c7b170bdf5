package io.thermocline.benchmarks.tiering;

import site.ycsb.ByteIterator;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.DB;
import site.ycsb.RandomByteIterator;
import site.ycsb.Status;
import site.ycsb.WorkloadException;
import site.ycsb.workloads.CoreWorkload;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Properties;

/**
 * YCSB's CoreWorkload whose records carry a date that follows their insertion order: record
 * {@code k} of the {@code dated.loaded} loaded ones is dated {@code dated.origin - span * (loaded-1-k) / loaded}
 * (the newest at the origin, the oldest a span, one year by default, before it); records inserted
 * by a run are dated when they are inserted. The date travels as field {@code dated.field}
 * (8 bytes, epoch milliseconds), which {@link io.thermocline.benchmarks.ycsb.MongoDbBinding}
 * stores as a BSON Date when {@code mongodb.datefield} names it.
 *
 * <p>{@code dated.newestfirst=true} turns the key space around for reads and updates: YCSB's
 * hotspot distribution puts its hot set at the low end of the key space, which this maps to the
 * newest records, so "99 % of operations on 9 % of the records" means the newest 9 %.
 */
public final class DatedWorkload extends CoreWorkload {
    public static final String FIELD = "dated.field";
    public static final String LOADED = "dated.loaded";
    public static final String ORIGIN = "dated.origin";
    public static final String SPAN = "dated.span";
    public static final String NEWEST_FIRST = "dated.newestfirst";

    private String dateField;
    private long loaded;
    private long origin;
    private long span;
    private boolean newestFirst;
    private String fieldPrefix;

    @Override
    public void init(Properties p) throws WorkloadException {
        super.init(p);
        dateField = p.getProperty(FIELD, "createdAt");
        loaded = Long.parseLong(p.getProperty(LOADED, p.getProperty("recordcount")));
        origin = Long.parseLong(p.getProperty(ORIGIN, Long.toString(System.currentTimeMillis())));
        span = Long.parseLong(p.getProperty(SPAN, Long.toString(365L * 24 * 3600 * 1000)));
        newestFirst = Boolean.parseBoolean(p.getProperty(NEWEST_FIRST, "false"));
        fieldPrefix = p.getProperty(FIELD_NAME_PREFIX, FIELD_NAME_PREFIX_DEFAULT);
    }

    /** The date of record {@code keynum}, in epoch milliseconds. */
    long dateOf(long keynum) {
        if (keynum >= loaded) {
            return System.currentTimeMillis();
        }
        return origin - (long) ((double) span * (loaded - 1 - keynum) / loaded);
    }

    /** The key number the next run's records start after: every insert so far acknowledged. */
    long nextInsertKey() {
        return transactioninsertkeysequence.lastValue() + 1;
    }

    @Override
    protected String buildKeyName(long keynum) {
        return super.buildKeyName(newestFirst ? recordcount - 1 - keynum : keynum);
    }

    @Override
    public boolean doInsert(DB db, Object threadstate) {
        long keynum = keysequence.nextValue().longValue();
        return insert(db, keynum).isOk();
    }

    @Override
    public void doTransactionInsert(DB db) {
        long keynum = transactioninsertkeysequence.nextValue();
        try {
            insert(db, keynum);
        } finally {
            transactioninsertkeysequence.acknowledge(keynum);
        }
    }

    private Status insert(DB db, long keynum) {
        HashMap<String, ByteIterator> values = new HashMap<>();
        for (int i = 0; i < fieldcount; i++) {
            values.put(fieldPrefix + i, new RandomByteIterator(fieldlengthgenerator.nextValue().longValue()));
        }
        values.put(dateField, new ByteArrayByteIterator(ByteBuffer.allocate(Long.BYTES).putLong(dateOf(keynum)).array()));
        return db.insert(table, super.buildKeyName(keynum), values);
    }
}
