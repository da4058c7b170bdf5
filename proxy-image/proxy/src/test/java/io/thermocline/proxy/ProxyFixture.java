package io.thermocline.proxy;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.config.ConfigLoader;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

/**
 * A proxy on an ephemeral port in front of an in-process MongoDB wire server (mongo-java-server,
 * memory backend) until the embedded replica set is available to every module.
 */
public final class ProxyFixture implements AutoCloseable {
    private MongoServer backend;
    private final int backendPort;
    private final ProxyServer proxy;

    private ProxyFixture(MongoServer backend, int backendPort, ProxyServer proxy) {
        this.backend = backend;
        this.backendPort = backendPort;
        this.proxy = proxy;
    }

    public static ProxyFixture start() {
        return start("", Map.of());
    }

    /** {@code proxyYaml} is extra YAML under {@code proxy:} (indented two spaces), e.g. "  maxClientConnections: 5\n". */
    public static ProxyFixture start(String proxyYaml, Map<String, String> env) {
        MongoServer backend = new MongoServer(new MemoryBackend());
        backend.bind("127.0.0.1", 0);
        InetSocketAddress address = backend.getLocalAddress();
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n" + proxyYaml
                + "tiers:\n  archive:\n    uri: mongodb://127.0.0.1:" + address.getPort() + "\n    connectionBudget: 4\n"
                + "fleet:\n  instanceId: test-proxy-0\n";
        ProxySettings settings = ProxySettings.from(ConfigLoader.parse(yaml, env))
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(3), Duration.ofMillis(200));
        try {
            return new ProxyFixture(backend, address.getPort(), new ProxyServer(settings).start());
        } catch (Exception e) {
            backend.shutdownNow();
            throw new IllegalStateException("proxy did not start", e);
        }
    }

    public String uri() {
        return "mongodb://127.0.0.1:" + proxy.port();
    }

    public int port() {
        return proxy.port();
    }

    public ProxyServer proxy() {
        return proxy;
    }

    public MongoServer backend() {
        return backend;
    }

    /** Stops the backend, as if the archive's only member went down. */
    public void stopBackend() {
        backend.shutdownNow();
    }

    /** Starts an empty backend on the same port again. */
    public void restartBackend() {
        backend = new MongoServer(new MemoryBackend());
        backend.bind("127.0.0.1", backendPort);
    }

    @Override
    public void close() {
        proxy.close();
        backend.shutdownNow();
    }
}
