package io.thermocline.security.authentication;

import io.thermocline.security.scram.ScramServerConversation;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Optional;

/**
 * What one client connection has proven: the user it authenticated as (at most one, as mongod
 * 5.0+ allows), and the SASL conversation in progress. Touched only by the connection's own
 * requests, which run one at a time.
 */
public final class ConnectionAuth {
    private final SocketAddress remote;
    private volatile StoredUser user;
    private ScramServerConversation conversation;
    private String conversationDb;
    private boolean skipEmptyExchange;
    private int conversationId;

    public ConnectionAuth(SocketAddress remote) {
        this.remote = remote;
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
