package io.thermocline.proxy.server.handshake;

import io.thermocline.proxy.topology.WireLimits;
import io.thermocline.wire.Compressor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * The proxy's own hello/isMaster answer: it presents itself as a mongos ({@code msg: "isdbgrid"})
 * so drivers treat it as a router, with the backends' wire versions and limits.
 */
public final class Handshake {
    /** Identifies this proxy process in {@code topologyVersion}; a restart gives drivers a new one. */
    private final ObjectId processId = new ObjectId();
    /** topologyVersion's counter: it changes once, when the proxy starts draining (mongos's quiesce mode). */
    private volatile long counter;
    /** Stands for the proxy instance in load-balanced mode, where drivers key pinning on it. */
    private final ObjectId serviceId;

    private final List<Compressor> supported;

    public Handshake(List<Compressor> supported, ObjectId serviceId) {
        this.supported = supported;
        this.serviceId = serviceId;
    }

    public ObjectId processId() {
        return processId;
    }

    /** The proxy starts draining: its topologyVersion changes, so awaitable hellos answer at once. */
    void quiesce() {
        counter = 1;
    }

    BsonDocument topologyVersion() {
        return new BsonDocument("processId", new BsonObjectId(processId)).append("counter", new BsonInt64(counter));
    }

    /** Compressors both sides know, in the client's order of preference. */
    List<Compressor> negotiate(BsonDocument request) {
        List<Compressor> agreed = new ArrayList<>();
        BsonValue offered = request.get("compression");
        if (offered instanceof BsonArray names) {
            for (BsonValue n : names) {
                if (n.isString()) {
                    Compressor.byName(n.asString().getValue())
                            .filter(supported::contains)
                            .filter(c -> !agreed.contains(c))
                            .ifPresent(agreed::add);
                }
            }
        }
        return agreed;
    }

    static boolean asksLoadBalanced(BsonDocument request) {
        BsonValue lb = request.get("loadBalanced");
        return lb != null && lb.isBoolean() && lb.asBoolean().getValue();
    }

    /** Whether this hello waits for a topology change (the streaming monitor protocol). */
    boolean isAwaitable(BsonDocument request) {
        BsonValue tv = request.get("topologyVersion");
        BsonValue wait = request.get("maxAwaitTimeMS");
        return tv != null && tv.isDocument() && wait != null && wait.isNumber();
    }

    /**
     * True when the client's topologyVersion is ours, i.e. nothing changed since it last asked: the same
     * process and the same counter (SDAM: a server answers at once when either differs).
     */
    boolean isCurrent(BsonDocument request) {
        BsonDocument tv = request.getDocument("topologyVersion");
        BsonValue pid = tv.get("processId");
        BsonValue count = tv.get("counter");
        return pid != null
                && pid.isObjectId()
                && pid.asObjectId().getValue().equals(processId)
                && count != null
                && count.isNumber()
                && count.asNumber().longValue() == counter;
    }

    BsonDocument reply(
            String commandName,
            BsonDocument request,
            WireLimits limits,
            long connectionId,
            List<Compressor> agreed,
            boolean loadBalanced,
            BsonDocument clusterTime) {
        boolean legacy = !commandName.equals("hello");
        BsonDocument d = new BsonDocument();
        BsonValue helloOk = request.get("helloOk");
        if (helloOk != null && helloOk.isBoolean() && helloOk.asBoolean().getValue()) {
            d.append("helloOk", BsonBoolean.TRUE);
        }
        d.append(legacy ? "ismaster" : "isWritablePrimary", BsonBoolean.TRUE)
                .append("msg", new BsonString("isdbgrid"))
                .append("topologyVersion", topologyVersion())
                .append("maxBsonObjectSize", new BsonInt32(limits.maxBsonObjectSize()))
                .append("maxMessageSizeBytes", new BsonInt32(limits.maxMessageSizeBytes()))
                .append("maxWriteBatchSize", new BsonInt32(limits.maxWriteBatchSize()))
                .append("localTime", new BsonDateTime(System.currentTimeMillis()));
        limits.sessionTimeoutMinutes().ifPresent(m -> d.append("logicalSessionTimeoutMinutes", new BsonInt32(m)));
        d.append("connectionId", new BsonInt64(connectionId))
                .append("minWireVersion", new BsonInt32(limits.minWireVersion()))
                .append("maxWireVersion", new BsonInt32(limits.maxWireVersion()))
                .append("readOnly", BsonBoolean.FALSE);
        if (request.containsKey("compression")) {
            BsonArray names = new BsonArray();
            agreed.forEach(c -> names.add(new BsonString(c.wireName())));
            d.append("compression", names);
        }
        if (loadBalanced) {
            d.append("serviceId", new BsonObjectId(serviceId));
        }
        if (clusterTime != null) {
            d.append("$clusterTime", clusterTime);
        }
        d.append("ok", new BsonDouble(1));
        return d;
    }

    /** A stable serviceId per instance id, so load-balanced drivers can tell fleet members apart. */
    public static ObjectId serviceIdFor(String instanceId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(instanceId.getBytes(StandardCharsets.UTF_8));
            return new ObjectId(Arrays.copyOf(digest, 12));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    }
}
