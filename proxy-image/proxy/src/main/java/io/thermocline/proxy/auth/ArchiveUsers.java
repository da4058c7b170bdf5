package io.thermocline.proxy.auth;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.security.UserName;
import io.thermocline.security.authentication.StoredUser;
import io.thermocline.security.authentication.UserDirectory;
import io.thermocline.security.roles.Privileges;
import io.thermocline.security.roles.RoleName;
import io.thermocline.security.scram.ScramCredential;
import io.thermocline.security.scram.ScramMechanism;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The archive's own users, so applications keep their users and passwords: each user is read
 * with {@code usersInfo} ({@code showCredentials}, {@code showPrivileges}: the archive resolves
 * built-in and custom roles and their inheritance itself) by the proxy's own user, and cached.
 * A cached user is read again once it is older than {@code refreshAfter}, so a password changed
 * or a role revoked on the archive takes effect through the proxy within that time; a user that
 * does not exist is asked again after {@code missRetryAfter}, so a new one can log in that soon.
 * When the archive cannot be reached, a cached user stays usable for {@code maxStale}, then fails closed.
 */
public final class ArchiveUsers implements UserDirectory {
    private static final Logger LOG = LoggerFactory.getLogger(ArchiveUsers.class);
    private static final int MAX_CACHED = 100_000;

    private record Entry(Optional<StoredUser> user, long fetchedNanos) {
    }

    private final MongoClient archive;
    private final long refreshNanos;
    private final long missNanos;
    private final long maxStaleNanos;
    private final LongSupplier clock;
    private final Map<UserName, Entry> cache = new ConcurrentHashMap<>();
    private final Map<UserName, CompletableFuture<Optional<StoredUser>>> inFlight = new ConcurrentHashMap<>();

    public ArchiveUsers(MongoClient archive, Duration refreshAfter, Duration missRetryAfter, Duration maxStale) {
        this(archive, refreshAfter, missRetryAfter, maxStale, System::nanoTime);
    }

    ArchiveUsers(MongoClient archive, Duration refreshAfter, Duration missRetryAfter, Duration maxStale, LongSupplier clock) {
        this.archive = archive;
        this.refreshNanos = refreshAfter.toNanos();
        this.missNanos = missRetryAfter.toNanos();
        this.maxStaleNanos = maxStale.toNanos();
        this.clock = clock;
    }

    @Override
    public CompletableFuture<Optional<StoredUser>> find(UserName name) {
        long now = clock.getAsLong();
        Entry e = cache.get(name);
        if (e != null && now - e.fetchedNanos < (e.user.isPresent() ? refreshNanos : missNanos)) {
            return CompletableFuture.completedFuture(e.user);
        }
        // One read per user at a time, however many connections log in as it at once.
        CompletableFuture<Optional<StoredUser>> mine = new CompletableFuture<>();
        CompletableFuture<Optional<StoredUser>> running = inFlight.putIfAbsent(name, mine);
        if (running != null) {
            return running;
        }
        fetch(name).whenComplete((user, error) -> {
            inFlight.remove(name, mine);
            if (error == null) {
                if (cache.size() >= MAX_CACHED) {
                    cache.clear();
                }
                cache.put(name, new Entry(user, clock.getAsLong()));
                mine.complete(user);
                return;
            }
            Entry stale = cache.get(name);
            if (stale != null && stale.user.isPresent() && clock.getAsLong() - stale.fetchedNanos < maxStaleNanos) {
                LOG.warn("event=archive_users_unreachable user={} action=\"using the cached user\" error=\"{}\"", name, error.toString());
                mine.complete(stale.user);
            } else {
                mine.completeExceptionally(error);
            }
        });
        return mine;
    }

    private CompletableFuture<Optional<StoredUser>> fetch(UserName name) {
        BsonDocument command = new BsonDocument("usersInfo", name.toDocument())
                .append("showCredentials", BsonBoolean.TRUE).append("showPrivileges", BsonBoolean.TRUE);
        return first(archive.getDatabase(name.db()).runCommand(command, BsonDocument.class)).thenApply(reply -> {
            BsonArray users = reply.getArray("users", new BsonArray());
            for (BsonValue u : users) {
                if (u.isDocument()) {
                    return Optional.of(fromUsersInfo(u.asDocument()));
                }
            }
            return Optional.empty();
        });
    }

    /** A user from one element of a {@code usersInfo} reply. */
    static StoredUser fromUsersInfo(BsonDocument d) {
        UserName name = new UserName(d.getString("user").getValue(), d.getString("db").getValue());
        Map<ScramMechanism, ScramCredential> credentials = d.get("credentials") instanceof BsonDocument c
                ? credentials(c, "usersInfo(" + name + ").credentials") : Map.of();
        List<RoleName> roles = new ArrayList<>();
        for (BsonValue r : d.getArray("roles", new BsonArray())) {
            roles.add(RoleName.from(r, name.db()));
        }
        Privileges privileges = Privileges.fromArray(d.getArray("inheritedPrivileges", new BsonArray()));
        return new StoredUser(name, credentials, roles, privileges);
    }

    /** The SCRAM credentials of a {@code credentials} document; other mechanisms (X.509, LDAP) are skipped. */
    static Map<ScramMechanism, ScramCredential> credentials(BsonDocument creds, String at) {
        Map<ScramMechanism, ScramCredential> out = new EnumMap<>(ScramMechanism.class);
        for (Map.Entry<String, BsonValue> c : creds.entrySet()) {
            Optional<ScramMechanism> m = ScramMechanism.byMongoName(c.getKey());
            if (m.isEmpty() || !c.getValue().isDocument()) {
                continue;
            }
            try {
                out.put(m.get(), ScramCredential.fromDocument(m.get(), c.getValue().asDocument()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(at + "." + c.getKey() + ": " + e.getMessage());
            }
        }
        return out;
    }

    @Override
    public String describe() {
        return "archive";
    }

    @Override
    public void close() {
        archive.close();
    }

    private static <T> CompletableFuture<T> first(Publisher<T> publisher) {
        CompletableFuture<T> result = new CompletableFuture<>();
        publisher.subscribe(new Subscriber<T>() {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(1);
            }

            @Override
            public void onNext(T t) {
                result.complete(t);
            }

            @Override
            public void onError(Throwable t) {
                result.completeExceptionally(t);
            }

            @Override
            public void onComplete() {
                result.completeExceptionally(new IllegalStateException("usersInfo returned no reply"));
            }
        });
        return result;
    }
}
