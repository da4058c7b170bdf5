package io.thermocline.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** Checks a parsed config; every message is {@code field.path: what is wrong; how to fix}. */
final class ConfigValidator {

    private static final Set<String> COMPRESSORS = Set.of("snappy", "zlib", "zstd");
    private static final Pattern INSTANCE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    private static final Pattern PEER = Pattern.compile("[A-Za-z0-9._\\-\\[\\]:]+:[0-9]{1,5}");
    private static final Pattern DATABASE = Pattern.compile("[^/\\\\. \"$*<>:|?]{1,63}");

    private ConfigValidator() {}

    static List<String> validate(ThermoclineConfig c) {
        List<String> p = new ArrayList<>();
        if (c.proxy() == null) {
            p.add("proxy: missing section");
        } else {
            ProxyConfig x = c.proxy();
            port(p, "proxy.port", x.port());
            port(p, "proxy.httpPort", x.httpPort());
            notBlank(p, "proxy.listenHost", x.listenHost());
            notBlank(p, "proxy.httpHost", x.httpHost());
            atLeast(p, "proxy.maxClientConnections", x.maxClientConnections(), 1);
            if (x.maxMessageSizeBytes() < 1_048_576 || x.maxMessageSizeBytes() > ProxyConfig.MONGODB_MAX_MESSAGE_SIZE) {
                p.add("proxy.maxMessageSizeBytes: " + x.maxMessageSizeBytes() + " is out of range; use 1048576 to "
                        + ProxyConfig.MONGODB_MAX_MESSAGE_SIZE + " (MongoDB's own limit)");
            }
            if (x.bufferedBytesPerConnectionLimit() < x.maxMessageSizeBytes()) {
                p.add("proxy.maxBufferedBytesPerConnection: " + x.bufferedBytesPerConnectionLimit()
                        + " is less than proxy.maxMessageSizeBytes (" + x.maxMessageSizeBytes()
                        + "); a connection must hold one message: use at least that, or leave it out for twice it");
            }
            if (x.bufferedBytesLimit() < x.bufferedBytesPerConnectionLimit()) {
                p.add("proxy.maxBufferedBytes: " + x.bufferedBytesLimit() + " is less than one connection's budget ("
                        + x.bufferedBytesPerConnectionLimit()
                        + ", proxy.maxBufferedBytesPerConnection); raise it, or leave it out for four times"
                        + " proxy.maxMessageSizeBytes");
            }
            positive(p, "proxy.causalWaitTimeout", x.causalWaitTimeout());
            if (x.readConsistency() == null) {
                p.add("proxy.readConsistency: missing; use linearizable (the default) or session");
            }
            notNegative(p, "proxy.drainTimeout", x.drainTimeout());
            for (String name : x.compressors()) {
                if (!COMPRESSORS.contains(name)) {
                    p.add("proxy.compressors: '" + name
                            + "' is not a MongoDB compressor; use any of snappy, zlib, zstd");
                }
            }
            if (!ProxyConfig.TRANSPORTS.contains(x.transport())) {
                p.add("proxy.transport: '" + x.transport() + "' is not a transport; use one of "
                        + String.join(", ", ProxyConfig.TRANSPORTS));
            }
        }
        TiersConfig tiers = c.tiers();
        if (tiers == null || tiers.archive() == null) {
            p.add(
                    "tiers.archive.uri: missing; set it to the archive replica set's connection string (mongodb://host:port/?replicaSet=NAME)");
        } else {
            tier(p, "tiers.archive", tiers.archive());
        }
        if (tiers != null && tiers.fast() != null) {
            tier(p, "tiers.fast", tiers.fast());
        }
        if (c.fleet() == null) {
            p.add("fleet: missing section");
        } else {
            atLeast(p, "fleet.replicas", c.fleet().replicas(), 1);
            if (c.fleet().instanceId() == null
                    || !INSTANCE_ID.matcher(c.fleet().instanceId()).matches()) {
                p.add("fleet.instanceId: '" + c.fleet().instanceId()
                        + "' is not a valid id; use letters, digits, '.', '_' or '-' (at most 63)");
            }
            port(p, "fleet.peerPort", c.fleet().peerPort());
            atLeast(p, "fleet.peerConnections", c.fleet().peerConnections(), 1);
            if (c.fleet().peers() != null) {
                for (int i = 0; i < c.fleet().peers().size(); i++) {
                    String peer = c.fleet().peers().get(i);
                    if (peer == null || !PEER.matcher(peer).matches()) {
                        p.add("fleet.peers[" + i + "]: '" + peer
                                + "' is not host:port; list each other proxy replica's peer address");
                    }
                }
            }
            if (c.fleet().secretFile() != null && c.fleet().secretFile().isBlank()) {
                p.add(
                        "fleet.secretFile: empty; give the path of the cluster secret every replica shares, or leave it out");
            }
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < c.collections().size(); i++) {
            CollectionPolicy policy = c.collections().get(i);
            String at = "collections[" + i + "]";
            if (policy == null) {
                p.add(at + ": empty entry; give database, collection, ageField and hotWindow");
                continue;
            }
            if (policy.database() == null
                    || !DATABASE.matcher(policy.database()).matches()) {
                p.add(at + ".database: '" + policy.database() + "' is not a MongoDB database name");
            }
            if (policy.collection() == null
                    || policy.collection().isEmpty()
                    || policy.collection().contains("$")
                    || policy.collection().startsWith("system.")) {
                p.add(at + ".collection: '" + policy.collection() + "' is not a user collection name");
            }
            if (policy.ageField() == null
                    || policy.ageField().isBlank()
                    || policy.ageField().startsWith("$")
                    || policy.ageField().startsWith(".")
                    || policy.ageField().endsWith(".")) {
                p.add(at + ".ageField: '" + policy.ageField()
                        + "' is not a field path; name a date field (e.g. createdAt) or _id for ObjectId time");
            }
            if (policy.hotWindow() == null
                    || policy.hotWindow().isZero()
                    || policy.hotWindow().isNegative()) {
                p.add(at + ".hotWindow: must be a positive duration such as 30d or 12h");
            }
            if (!seen.add(policy.namespace())) {
                p.add(at + ": " + policy.namespace() + " has a policy already; keep one entry per collection");
            }
        }
        if (!c.collections().isEmpty() && (tiers == null || tiers.fast() == null)) {
            p.add(
                    "tiers.fast.uri: collections are tiered but no fast tier is configured; set tiers.fast.uri or remove collections");
        }
        if (c.feeder() != null) {
            range(p, "feeder.batchSize", c.feeder().batchSize(), 1, 100_000);
            notNegative(p, "feeder.maxBatchWait", c.feeder().maxBatchWait());
        }
        if (c.evictor() != null) {
            positive(p, "evictor.interval", c.evictor().interval());
            range(p, "evictor.batchSize", c.evictor().batchSize(), 1, 100_000);
            atLeast(p, "evictor.maxDocumentsPerSecond", c.evictor().maxDocumentsPerSecond(), 1);
        }
        if (c.warmer() != null) {
            range(p, "warmer.batchSize", c.warmer().batchSize(), 1, 100_000);
            atLeast(p, "warmer.maxDocumentsPerSecond", c.warmer().maxDocumentsPerSecond(), 1);
        }
        auth(p, c.auth());
        tls(p, c.tls(), tiers);
        shadow(p, c);
        return p;
    }

    private static void shadow(List<String> p, ThermoclineConfig c) {
        ShadowConfig s = c.shadow();
        if (!(s.sampleRate() >= 0 && s.sampleRate() <= 1)) {
            p.add("shadow.sampleRate: " + s.sampleRate()
                    + " is not a share; use 0 (compare nothing) to 1 (compare every read the fast tier could answer)");
        }
        positive(p, "shadow.cutoverQuietPeriod", s.cutoverQuietPeriod());
        if (s.minComparisons() < 0) {
            p.add("shadow.minComparisons: " + s.minComparisons() + " is negative; use 0 or more (default 1000)");
        }
        atLeast(p, "shadow.queueCapacity", s.queueCapacity(), 1);
        if (c.mode() != Mode.TIERED && (c.tiers() == null || c.tiers().fast() == null)) {
            p.add("mode: " + c.mode().configName()
                    + " needs a fast tier; set tiers.fast.uri or use mode: tiered (pass-through)");
        }
    }

    private static void auth(List<String> p, AuthConfig a) {
        if (!AuthConfig.MODES.contains(a.mode())) {
            p.add("auth.mode: '" + a.mode() + "' is not a mode; use required (clients must log in) or disabled");
        }
        for (String source : a.users()) {
            if (!AuthConfig.SOURCES.contains(source)) {
                p.add("auth.users: '" + source + "' is not a user source; use archive, file, or both");
            }
        }
        if ("required".equals(a.mode()) && a.users().isEmpty()) {
            p.add(
                    "auth.users: empty while auth.mode is required, so nobody could log in; use archive and/or file, or set auth.mode: disabled");
        }
        boolean file = a.users().contains("file");
        if (file && (a.usersFile() == null || a.usersFile().isBlank())) {
            p.add(
                    "auth.usersFile: missing while auth.users names file; give the path of the users file (a mounted Secret)");
        } else if (file && !Files.isReadable(Path.of(a.usersFile()))) {
            p.add("auth.usersFile: " + a.usersFile() + " cannot be read; mount the users Secret there or fix the path");
        }
        positive(p, "auth.refreshInterval", a.refreshInterval());
        positive(p, "auth.missRetryInterval", a.missRetryInterval());
        notNegative(p, "auth.failedLoginDelay", a.failedLoginDelay());
        notNegative(p, "auth.maxFailedLoginDelay", a.maxFailedLoginDelay());
    }

    private static void tls(List<String> p, TlsConfig t, TiersConfig tiers) {
        String mode = t.normalizedMode();
        if (!TlsConfig.MODES.contains(mode)) {
            p.add(
                    "tls.mode: '" + t.mode()
                            + "' is not a mode; use disabled, allowed, preferred or required (or mongod's allowTLS, preferTLS, requireTLS)");
        } else if (!mode.equals("disabled")) {
            readable(p, "tls.certificateFile", t.certificateFile(), "the proxy's PEM certificate chain");
            readable(p, "tls.keyFile", t.keyFile(), "the PEM private key of that certificate");
        }
        if (t.hasClientCa()) {
            readable(p, "tls.clientCaFile", t.clientCaFile(), "the PEM CAs of client certificates");
        } else if (Boolean.FALSE.equals(t.allowConnectionsWithoutCertificates())) {
            p.add("tls.allowConnectionsWithoutCertificates: false needs tls.clientCaFile, the CAs that verify the"
                    + " certificates it requires; set tls.clientCaFile or drop the setting");
        }
        if (t.tierCaFile() != null && !t.tierCaFile().isBlank()) {
            readable(p, "tls.tierCaFile", t.tierCaFile(), "the PEM CAs of the tiers' certificates");
        }
    }

    private static void readable(List<String> p, String at, String path, String what) {
        if (path == null || path.isBlank()) {
            p.add(at + ": missing; give the path of " + what);
        } else if (!Files.isReadable(Path.of(path))) {
            p.add(at + ": " + path + " cannot be read; mount " + what + " there or fix the path");
        }
    }

    private static void tier(List<String> p, String at, TierConfig tier) {
        String uri = tier.uri();
        if (uri == null || uri.isBlank()) {
            p.add(at + ".uri: missing; set the replica set's connection string (mongodb://host:port/?replicaSet=NAME)");
        } else if (!(uri.startsWith("mongodb://") || uri.startsWith("mongodb+srv://"))
                || uri.replaceFirst("^mongodb(\\+srv)?://", "").isBlank()) {
            p.add(
                    at + ".uri: '" + redact(uri)
                            + "' is not a MongoDB connection string; it must start with mongodb:// or mongodb+srv:// and name a host");
        }
        atLeast(p, at + ".connectionBudget", tier.connectionBudget(), 1);
    }

    /** Never echo credentials back in an error. */
    static String redact(String uri) {
        return uri.replaceAll("//[^@/]*@", "//***@");
    }

    private static void port(List<String> p, String at, int port) {
        range(p, at, port, 0, 65535);
    }

    private static void range(List<String> p, String at, int value, int min, int max) {
        if (value < min || value > max) {
            p.add(at + ": " + value + " is out of range; use " + min + " to " + max);
        }
    }

    private static void atLeast(List<String> p, String at, int value, int min) {
        if (value < min) {
            p.add(at + ": " + value + " is too small; use at least " + min);
        }
    }

    private static void notBlank(List<String> p, String at, String value) {
        if (value == null || value.isBlank()) {
            p.add(at + ": missing; give a host name or address such as 0.0.0.0");
        }
    }

    private static void positive(List<String> p, String at, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            p.add(at + ": must be a positive duration such as 5s");
        }
    }

    private static void notNegative(List<String> p, String at, Duration d) {
        if (d == null || d.isNegative()) {
            p.add(at + ": must be a duration of zero or more, such as 30s");
        }
    }
}
