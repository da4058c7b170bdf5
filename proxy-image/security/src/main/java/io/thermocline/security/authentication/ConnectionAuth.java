package io.thermocline.security.authentication;

import io.thermocline.security.UserName;
import io.thermocline.security.roles.Target;
import io.thermocline.security.scram.ScramServerConversation;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What one client connection has proven: the user it authenticated as (at most one, as mongod
 * 5.0+ allows), and the SASL conversation in progress. Touched only by the connection's own
 * requests, which run one at a time.
 */
public final class ConnectionAuth {
    private final SocketAddress remote;
    /** The subject DN (RFC 2253) of the verified client certificate, once TLS has one. */
    private final Supplier<Optional<String>> certificateSubject;
    /** Authorization is enforced (auth.mode required): cursors belong to the user that opened them. */
    private final boolean enforced;
    private volatile StoredUser user;
    /** The user a fleet peer vouches for: the client of a forwarded cursor command, authenticated on the peer. */
    private final UserName vouchedFor;
    private ScramServerConversation conversation;
    private String conversationDb;
    private boolean skipEmptyExchange;
    private int conversationId;

    /** A connection of a proxy that does not enforce authorization. */
    public ConnectionAuth(SocketAddress remote) {
        this(remote, false);
    }

    public ConnectionAuth(SocketAddress remote, boolean enforced) {
        this(remote, enforced, Optional::empty);
    }

    public ConnectionAuth(SocketAddress remote, boolean enforced, Supplier<Optional<String>> certificateSubject) {
        this(remote, enforced, certificateSubject, null);
    }

    private ConnectionAuth(SocketAddress remote, boolean enforced, Supplier<Optional<String>> certificateSubject, UserName vouchedFor) {
        this.remote = remote;
        this.enforced = enforced;
        this.certificateSubject = certificateSubject;
        this.vouchedFor = vouchedFor;
    }

    /**
     * A cursor command forwarded by a fleet peer (the link is authenticated with the cluster secret): it runs
     * as the peer's client, {@code user} (null: none logged in), under the peer's {@code enforced} setting.
     * Only the creator test applies: privileges such as killAnyCursor stay with the replica the client is on.
     */
    public static ConnectionAuth vouchedFor(SocketAddress peer, boolean enforced, UserName user) {
        return new ConnectionAuth(peer, enforced, Optional::empty, user);
    }

    /** Whether authorization is enforced on this connection (a fleet peer passes it on with forwarded commands). */
    public boolean enforced() {
        return enforced;
    }

    /** The subject of the client certificate TLS verified on this connection, if any. */
    public Optional<String> certificateSubject() {
        return certificateSubject.get();
    }

    /** The authenticated user's name, or null: what a cursor opened now records as its creator. */
    public UserName userName() {
        StoredUser u = user;
        return u == null ? vouchedFor : u.name();
    }

    /**
     * Whether this connection may continue (getMore) a cursor opened by {@code creator}: only the
     * same user, as mongod's {@code isCoauthorizedWith}; anyone when authorization is not enforced.
     */
    public boolean mayContinueCursorOf(UserName creator) {
        return !enforced || Objects.equals(creator, userName());
    }

    /** Whether this connection may kill such a cursor on {@code namespace}: its creator, or a user with {@code killAnyCursor} there. */
    public boolean mayKillCursorOf(UserName creator, Target.Collection namespace) {
        StoredUser u = user;
        return mayContinueCursorOf(creator) || (u != null && u.privileges().allows(namespace, "killAnyCursor"));
    }

    public Optional<StoredUser> user() {
        return Optional.ofNullable(user);
    }

    public boolean isAuthenticated() {
        return user != null;
    }

    /** The client's address without the port: failed attempts are counted per address. */
    public InetAddress sourceAddress() {
        return remote instanceof InetSocketAddress inet && inet.getAddress() != null ? inet.getAddress() : InetAddress.getLoopbackAddress();
    }

    public void authenticated(StoredUser who) {
        this.user = who;
    }

    public void loggedOut() {
        this.user = null;
    }

    int begin(ScramServerConversation next, String db, boolean skipEmpty) {
        conversation = next;
        conversationDb = db;
        skipEmptyExchange = skipEmpty;
        return ++conversationId;
    }

    /** The conversation with this id, if it is the one in progress. */
    Optional<ScramServerConversation> conversation(int id) {
        return id == conversationId && conversation != null ? Optional.of(conversation) : Optional.empty();
    }

    String conversationDb() {
        return conversationDb;
    }

    boolean skipEmptyExchange() {
        return skipEmptyExchange;
    }

    void endConversation() {
        conversation = null;
        conversationDb = null;
    }
}
