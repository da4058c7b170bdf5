package io.thermocline.config;

import java.time.Duration;
import java.util.List;

/** Where the proxy listens and how it treats clients. */
public record ProxyConfig(
        String listenHost,
        int port,
        String httpHost,
        int httpPort,
        int maxClientConnections,
        int maxMessageSizeBytes,
        Duration causalWaitTimeout,
        ReadConsistency readConsistency,
        Duration drainTimeout,
        List<String> compressors,
        String transport) {

    public static final int MONGODB_MAX_MESSAGE_SIZE = 48_000_000;
    /** Network transports: {@code auto} takes io_uring where the kernel allows it, then epoll, then NIO. */
    public static final List<String> TRANSPORTS = List.of("auto", "io_uring", "epoll", "nio");

    public ProxyConfig {
        compressors = compressors == null ? List.of() : List.copyOf(compressors);
    }

    /** The schema before {@code readConsistency}: the default, {@code linearizable}. */
    public ProxyConfig(String listenHost, int port, String httpHost, int httpPort, int maxClientConnections,
                       int maxMessageSizeBytes, Duration causalWaitTimeout, Duration drainTimeout, List<String> compressors,
                       String transport) {
        this(listenHost, port, httpHost, httpPort, maxClientConnections, maxMessageSizeBytes, causalWaitTimeout,
                ReadConsistency.LINEARIZABLE, drainTimeout, compressors, transport);
    }

    public static ProxyConfig defaults() {
        return new ProxyConfig("0.0.0.0", 27017, "0.0.0.0", 9090, 10_000, MONGODB_MAX_MESSAGE_SIZE,
                Duration.ofSeconds(5), ReadConsistency.LINEARIZABLE, Duration.ofSeconds(30), List.of("zstd", "snappy", "zlib"), "auto");
    }
}
