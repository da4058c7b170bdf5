package io.thermocline.proxy.history;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.ClientSession;
import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.UpdateResult;
import io.thermocline.proxy.chaos.TieredFleet;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.conversions.Bson;

/**
 * One client of the workload: its own driver client (and, for some, one explicit causally
 * consistent session used for every operation), running a seeded random mix of writes and reads on
 * documents placed around the window edge, each recorded in the {@link History}.
 */
final class HistoryClient {

    static final int BUCKETS = 4;
    private static final long WINDOW_MILLIS = TieredFleet.POLICY.hotWindow().toMillis();

    /** Keys and values shared by all clients: every insert a fresh key, every write a fresh value. */
    static final class Keys {
        final AtomicInteger nextKey = new AtomicInteger(1);
        final AtomicLong nextValue = new AtomicLong(1);
        private final List<Integer> used = new ArrayList<>();

        synchronized void used(int key) {
            used.add(key);
        }

        synchronized int pick(Random random) {
            return used.isEmpty() ? 1 : used.get(random.nextInt(used.size()));
        }

        /** A new version of {@code key}: a fresh value and an age around the window edge. */
        Doc version(int key, Random random) {
            return new Doc(key, nextValue.getAndIncrement(), age(random), key % BUCKETS);
        }
    }

    private final int process;
    private final ClientSession session;
    private final MongoCollection<BsonDocument> orders;
    private final History history;
    private final Keys keys;
    private final Random random;
    private final boolean duplicateInserts;
    private final boolean retrySwitchRefusals;

    HistoryClient(
            int process,
            ClientSession session,
            MongoCollection<BsonDocument> orders,
            History history,
            Keys keys,
            Random random,
            boolean duplicateInserts) {
        this(process, session, orders, history, keys, random, duplicateInserts, false);
    }

    /**
     * @param retrySwitchRefusals retry an operation the fleet refused while it switches mode (after the driver's own
     *                            retry), as an application does; it is recorded as one operation, acknowledged only if
     *                            an attempt succeeded
     */
    HistoryClient(
            int process,
            ClientSession session,
            MongoCollection<BsonDocument> orders,
            History history,
            Keys keys,
            Random random,
            boolean duplicateInserts,
            boolean retrySwitchRefusals) {
        this.retrySwitchRefusals = retrySwitchRefusals;
        this.process = process;
        this.session = session;
        this.orders = orders;
        this.history = history;
        this.keys = keys;
        this.random = random;
        this.duplicateInserts = duplicateInserts;
    }

    /** Runs and records one operation, retrying a mode-switch refusal for up to 10 s if so configured. */
    private void record(Call call, Callable<Outcome> action) {
        history.run(
                process,
                sessionId(),
                call,
                retrySwitchRefusals
                        ? () -> {
                            long deadline = System.nanoTime() + 10_000_000_000L;
                            while (true) {
                                try {
                                    return action.call();
                                } catch (MongoException e) {
                                    if (!(refusedWhileSwitching(e) || (!call.isWrite() && readRefusedWhileSwitching(e)))
                                            || System.nanoTime() > deadline) {
                                        throw e;
                                    }
                                    switchRefusals.incrementAndGet();
                                    Thread.sleep(20);
                                }
                            }
                        }
                        : action);
    }

    /** Refusals retried by the clients that retry them (all clients of a run). */
    static final AtomicLong switchRefusals = new AtomicLong();

    /** The proxy's retryable refusal while the fleet switches mode (ExceededTimeLimit 262, RetryableWriteError). */
    static boolean refusedWhileSwitching(MongoException e) {
        return e.getCode() == 262
                && e.hasErrorLabel("RetryableWriteError")
                && String.valueOf(e.getMessage()).contains("Thermocline");
    }

    /** A read the proxy refused while the fleet is held for a restore (ExceededTimeLimit 262, no label: a read is not applied). */
    static boolean readRefusedWhileSwitching(MongoException e) {
        return e.getCode() == 262 && String.valueOf(e.getMessage()).contains("Thermocline");
    }

    private int sessionId() {
        return session == null ? Op.NO_SESSION : process;
    }

    /**
     * An age that crosses the edge during a run (within seconds of it), well inside, or well outside
     * the window, as epoch millis at the moment of the write.
     */
    static long age(Random random) {
        long edge = System.currentTimeMillis() - WINDOW_MILLIS;
        int kind = random.nextInt(20);
        if (kind < 9) {
            return edge + random.nextInt(6000) - 3000;
        }
        if (kind < 16) {
            return edge + 60_000 + random.nextInt(30 * 60_000);
        }
        return edge - 60_000 - random.nextInt(30 * 60_000);
    }

    void run(int operations) {
        run(operations, () -> false);
    }

    /** At least {@code operations}, then on while {@code more} says so. */
    void run(int operations, java.util.function.BooleanSupplier more) {
        for (int i = 0; i < operations || more.getAsBoolean(); i++) {
            step();
        }
    }

    /**
     * Reads only, of recent documents (what the fast tier could answer) and by key: with no write in flight a shadow
     * comparison is not skipped for a change that began after its read.
     */
    void runReads(int operations) {
        for (int i = 0; i < operations; i++) {
            int choice = random.nextInt(3);
            Filter.AgeAtLeast recent = new Filter.AgeAtLeast(System.currentTimeMillis() - WINDOW_MILLIS + 10 * 60_000);
            if (choice == 0) {
                scan(recent);
            } else if (choice == 1) {
                count(recent);
            } else {
                pointRead(keys.pick(random));
            }
        }
    }

    private void step() {
        int choice = random.nextInt(100);
        if (choice < 20) {
            int key = keys.nextKey.getAndIncrement();
            insert(List.of(keys.version(key, random)), true);
            keys.used(key);
        } else if (choice < 24 && duplicateInserts) {
            // a batch around an existing key: one database inserts the others and refuses that one with E11000
            int first = keys.nextKey.getAndIncrement();
            int last = keys.nextKey.getAndIncrement();
            insert(
                    List.of(
                            keys.version(first, random),
                            keys.version(keys.pick(random), random),
                            keys.version(last, random)),
                    random.nextBoolean());
            keys.used(first);
            keys.used(last);
        } else if (choice < 44) {
            update(keys.version(keys.pick(random), random));
        } else if (choice < 52) {
            delete(keys.pick(random));
        } else if (choice < 70) {
            pointRead(keys.pick(random));
        } else if (choice < 80) {
            scan(new Filter.Bucket(random.nextInt(BUCKETS)));
        } else if (choice < 88) {
            // provably hot once the warmer covered the window: the fast tier answers
            scan(new Filter.AgeAtLeast(System.currentTimeMillis() - WINDOW_MILLIS + 10 * 60_000));
        } else if (choice < 96) {
            count(new Filter.Bucket(random.nextInt(BUCKETS)));
        } else {
            count(new Filter.AgeAtLeast(System.currentTimeMillis() - WINDOW_MILLIS + 10 * 60_000));
        }
    }

    void insert(List<Doc> docs, boolean ordered) {
        record(new Call.Insert(docs, ordered), () -> {
            List<BsonDocument> bson = docs.stream().map(HistoryClient::bson).collect(Collectors.toList());
            InsertManyOptions options = new InsertManyOptions().ordered(ordered);
            try {
                if (bson.size() == 1) {
                    if (session == null) {
                        orders.insertOne(bson.get(0));
                    } else {
                        orders.insertOne(session, bson.get(0));
                    }
                    return Outcome.Written.of(1);
                }
                if (session == null) {
                    orders.insertMany(bson, options);
                } else {
                    orders.insertMany(session, bson, options);
                }
                return Outcome.Written.of(bson.size());
            } catch (MongoWriteException e) {
                if (e.getCode() == 11000) {
                    return new Outcome.Written(0, Set.of(0));
                }
                throw e;
            } catch (MongoBulkWriteException e) {
                if (e.getWriteConcernError() != null
                        || e.getWriteErrors().stream().anyMatch(error -> error.getCode() != 11000)) {
                    throw e;
                }
                return new Outcome.Written(
                        e.getWriteResult().getInsertedCount(),
                        e.getWriteErrors().stream()
                                .map(BulkWriteError::getIndex)
                                .collect(Collectors.toSet()));
            }
        });
    }

    private void update(Doc doc) {
        Bson filter = Filters.eq("_id", doc.key());
        Bson update = Updates.combine(
                Updates.set("value", doc.value()),
                Updates.set(TieredFleet.POLICY.ageField(), new BsonDateTime(doc.age())));
        record(new Call.Update(doc), () -> {
            UpdateResult result =
                    session == null ? orders.updateOne(filter, update) : orders.updateOne(session, filter, update);
            return Outcome.Written.of(result.getMatchedCount());
        });
    }

    private void delete(int key) {
        record(new Call.Delete(key), () -> {
            DeleteResult result = session == null
                    ? orders.deleteOne(Filters.eq("_id", key))
                    : orders.deleteOne(session, Filters.eq("_id", key));
            return Outcome.Written.of(result.getDeletedCount());
        });
    }

    private void pointRead(int key) {
        record(new Call.PointRead(key), () -> found(find(Filters.eq("_id", key))));
    }

    private void scan(Filter filter) {
        record(new Call.Scan(filter), () -> found(find(bson(filter))));
    }

    private void count(Filter filter) {
        record(
                new Call.Count(filter),
                () -> new Outcome.Counted(
                        session == null
                                ? orders.countDocuments(bson(filter))
                                : orders.countDocuments(session, bson(filter))));
    }

    private FindIterable<BsonDocument> find(Bson filter) {
        return session == null ? orders.find(filter) : orders.find(session, filter);
    }

    private static Outcome found(FindIterable<BsonDocument> cursor) {
        List<Doc> docs = new ArrayList<>();
        for (BsonDocument document : cursor) {
            docs.add(doc(document));
        }
        return new Outcome.Found(docs);
    }

    static Bson bson(Filter filter) {
        if (filter instanceof Filter.Bucket bucket) {
            return Filters.eq("bucket", bucket.bucket());
        }
        if (filter instanceof Filter.AgeAtLeast age) {
            return Filters.gte(TieredFleet.POLICY.ageField(), new BsonDateTime(age.millis()));
        }
        return new BsonDocument();
    }

    static BsonDocument bson(Doc doc) {
        return new BsonDocument("_id", new BsonInt32(doc.key()))
                .append(TieredFleet.POLICY.ageField(), new BsonDateTime(doc.age()))
                .append("value", new BsonInt64(doc.value()))
                .append("bucket", new BsonInt32(doc.bucket()));
    }

    /** The document as read; one missing a field or of another type gets value -1, which no write wrote. */
    static Doc doc(BsonDocument document) {
        int key = document.get("_id") != null && document.get("_id").isInt32()
                ? document.getInt32("_id").getValue()
                : -1;
        try {
            return new Doc(
                    key,
                    document.getInt64("value").getValue(),
                    document.getDateTime(TieredFleet.POLICY.ageField()).getValue(),
                    document.getInt32("bucket").getValue());
        } catch (RuntimeException e) {
            return new Doc(key, -1, 0, -1);
        }
    }
}
