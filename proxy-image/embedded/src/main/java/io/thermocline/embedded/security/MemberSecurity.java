package io.thermocline.embedded.security;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslContext;
import io.netty.util.AttributeKey;
import io.thermocline.security.authentication.Authenticator;
import io.thermocline.security.authentication.ConnectionAuth;
import io.thermocline.security.authentication.LoginThrottle;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;

import java.util.Optional;
import java.util.Set;

/**
 * Authentication for one member's connections, as mongod with {@code --auth} does it: SCRAM
 * (SHA-256 and SHA-1, speculative in hello too), user and role management against the set's
 * {@link UserRegistry}, and, when required, error 13 for other commands before a login. It does
 * not check privileges: the embedded set is a test substrate for clients and the proxy.
 */
public final class MemberSecurity {
    private static final AttributeKey<ConnectionAuth> AUTH = AttributeKey.valueOf("thermocline.member.auth");
    private static final Set<String> WITHOUT_AUTH = Set.of("hello", "ismaster", "saslstart", "saslcontinue", "logout",
            "ping", "buildinfo", "connectionstatus", "endsessions", "configurefailpoint", "waitforfailpoint");

    private final UserRegistry users;
    private final boolean required;
    private final Authenticator authenticator;
    private final SslContext tls;

    public MemberSecurity(UserRegistry users, boolean required) {
        this(users, required, null);
    }

    /** {@code tls}: the members' server TLS (requireTLS), or null for plain text. */
    public MemberSecurity(UserRegistry users, boolean required, SslContext tls) {
        this.users = users;
        this.required = required;
        this.authenticator = new Authenticator(users, LoginThrottle.off());
        this.tls = tls;
    }

    /** As mongod's {@code net.tls.mode: requireTLS}: the first handler of a member connection, when TLS is on. */
    public void install(ChannelPipeline pipeline) {
        if (tls != null) {
            pipeline.addLast("tls", tls.newHandler(pipeline.channel().alloc()));
        }
    }

    public boolean tls() {
        return tls != null;
    }

    /** No users, no authentication: the default. */
    public static MemberSecurity open() {
        return new MemberSecurity(new UserRegistry(), false);
    }

    private ConnectionAuth auth(Channel channel) {
        ConnectionAuth a = channel.attr(AUTH).get();
        if (a == null) {
            a = new ConnectionAuth(channel.remoteAddress());
            ConnectionAuth raced = channel.attr(AUTH).setIfAbsent(a);
            a = raced != null ? raced : a;
        }
        return a;
    }

    /** Answers authentication and user-management commands, and refusals; empty lets the member run the command. */
    public Optional<BsonDocument> intercept(Channel channel, String db, BsonDocument command) {
        String name = command.isEmpty() ? "" : command.getFirstKey();
        String lower = name.toLowerCase();
        ConnectionAuth conn = auth(channel);
        switch (lower) {
            case "saslstart":
                return Optional.of(authenticator.saslStart(conn, command, db).join());
            case "saslcontinue":
                return Optional.of(authenticator.saslContinue(conn, command).join());
            case "logout":
                return Optional.of(authenticator.logout(conn));
            case "connectionstatus": {
                BsonArray who = new BsonArray();
                conn.user().ifPresent(u -> who.add(u.name().toDocument()));
                return Optional.of(new BsonDocument("authInfo", new BsonDocument("authenticatedUsers", who)
                        .append("authenticatedUserRoles", new BsonArray())).append("ok", new BsonDouble(1)));
            }
            default:
                break;
        }
        // mongod's localhost exception: with no user yet, the first one can be created without a login.
        boolean bootstrap = lower.equals("createuser") && users.isEmpty();
        if (required && !conn.isAuthenticated() && !WITHOUT_AUTH.contains(lower) && !bootstrap) {
            return Optional.of(Authenticator.error(13, "Unauthorized", "command " + name + " requires authentication"));
        }
        return Optional.ofNullable(users.command(lower, db, command));
    }

    /** Adds {@code saslSupportedMechs} and the speculative first step to a hello reply. */
    public BsonDocument hello(Channel channel, BsonDocument request, BsonDocument reply) {
        ConnectionAuth conn = auth(channel);
        authenticator.supportedMechanisms(request).join().ifPresent(m -> reply.append("saslSupportedMechs", m));
        authenticator.speculative(conn, request).join().ifPresent(s -> reply.append("speculativeAuthenticate", s));
        return reply;
    }
}
