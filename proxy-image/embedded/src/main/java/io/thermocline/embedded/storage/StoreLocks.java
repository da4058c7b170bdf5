package io.thermocline.embedded.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Who may use the storage engine at once. The engine changes a stored document in place and hands readers
 * references to stored documents, so a reader copying its result must not overlap a write of the same
 * collection: per collection, readers share and a writer is alone. A command that names no single collection
 * (dropDatabase, renameCollection, a database-level aggregate, an aggregate writing with $out or $merge) has
 * the whole store alone. Readers take their collections' locks in name order and writers take one lock, so no
 * two commands wait for each other in a cycle.
 */
final class StoreLocks {
    private final ReentrantReadWriteLock whole = new ReentrantReadWriteLock();
    private final Map<String, ReentrantReadWriteLock> collections = new ConcurrentHashMap<>();

    /** Runs a read of the collections the command reads (its own, and those its pipeline looks up). */
    <T> T reading(String database, BsonDocument command, Supplier<T> work) {
        List<String> namespaces = read(database, command);
        return namespaces == null ? alone(work) : under(namespaces, false, work);
    }

    /** Runs a command that may change documents of the collection it names, or the whole store when it names none. */
    <T> T writing(String database, BsonDocument command, Supplier<T> work) {
        String namespace = single(database, command);
        return namespace == null ? alone(work) : under(List.of(namespace), true, work);
    }

    <T> T readingCollection(String database, String collection, Supplier<T> work) {
        return under(List.of(database + "." + collection), false, work);
    }

    <T> T alone(Supplier<T> work) {
        whole.writeLock().lock();
        try {
            return work.get();
        } finally {
            whole.writeLock().unlock();
        }
    }

    private <T> T under(List<String> namespaces, boolean write, Supplier<T> work) {
        whole.readLock().lock();
        List<Lock> held = new ArrayList<>();
        try {
            for (String ns : new TreeSet<>(namespaces)) {
                ReentrantReadWriteLock lock = collections.computeIfAbsent(ns, n -> new ReentrantReadWriteLock());
                Lock l = write ? lock.writeLock() : lock.readLock();
                l.lock();
                held.add(l);
            }
            return work.get();
        } finally {
            for (int i = held.size() - 1; i >= 0; i--) {
                held.get(i).unlock();
            }
            whole.readLock().unlock();
        }
    }

    /** The collection a command names ({@code getMore}: its {@code collection} field); null when it names none. */
    private static String single(String database, BsonDocument command) {
        String name = command.getFirstKey();
        BsonValue target = name.equalsIgnoreCase("getMore") ? command.get("collection") : command.get(name);
        if (!(target instanceof BsonString s) || s.getValue().isEmpty() || name.equalsIgnoreCase("renameCollection")
            || name.equalsIgnoreCase("aggregate") && writesOutput(command)) {
            return null;
        }
        return database + "." + s.getValue();
    }

    /** The collections a read reads: its own and every {@code from} of its pipeline's lookups; null beyond them. */
    private static List<String> read(String database, BsonDocument command) {
        String own = single(database, command);
        if (own == null) {
            return null;
        }
        List<String> namespaces = new ArrayList<>(List.of(own));
        if (command.isArray("pipeline") && !lookups(database, command.getArray("pipeline"), namespaces)) {
            return null;
        }
        return namespaces;
    }

    private static boolean lookups(String database, BsonArray pipeline, List<String> into) {
        for (BsonValue stage : pipeline) {
            if (!stage.isDocument()) {
                continue;
            }
            for (String operator : List.of("$lookup", "$graphLookup")) {
                BsonValue spec = stage.asDocument().get(operator);
                if (spec == null) {
                    continue;
                }
                BsonValue from = spec.isDocument() ? spec.asDocument().get("from") : null;
                if (!(from instanceof BsonString s)) {
                    return false;
                }
                into.add(database + "." + s.getValue());
                if (spec.asDocument().isArray("pipeline") && !lookups(database, spec.asDocument().getArray("pipeline"), into)) {
                    return false;
                }
            }
            BsonValue facet = stage.asDocument().get("$facet");
            if (facet != null && facet.isDocument()) {
                for (BsonValue sub : facet.asDocument().values()) {
                    if (!sub.isArray() || !lookups(database, sub.asArray(), into)) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    static boolean writesOutput(BsonDocument aggregate) {
        for (BsonValue stage : aggregate.getArray("pipeline", new BsonArray())) {
            if (stage.isDocument() && (stage.asDocument().containsKey("$out") || stage.asDocument().containsKey("$merge"))) {
                return true;
            }
        }
        return false;
    }
}
