package io.thermocline.config;

import java.time.Duration;
import java.util.List;

/**
 * Where the proxy listens and how it treats clients.
 *
 * @param maxBufferedBytesPerConnection what one client connection's messages may hold, framed and inflated, until
 *                                      answered; null: twice {@code maxMessageSizeBytes} (one largest message, compressed)
 * @param maxBufferedBytes              the same for all connections together; null: four times {@code maxMessageSizeBytes}
 */
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
        String transport,
        Long maxBufferedBytesPerConnection,
        Long maxBufferedBytes) {

    public static final int MONGODB_MAX_MESSAGE_SIZE = 48_000_000;
    /** Network transports: {@code auto} takes io_uring where the kernel allows it, then epoll, then NIO. */
    public static final List<String> TRANSPORTS = List.of("auto", "io_uring", "epoll", "nio");

    public ProxyConfig {
        compressors = compressors == null ? List.of() : List.copyOf(compressors);
    }

    /** The schema before the message buffer budgets: both derived from {@code maxMessageSizeBytes}. */
    public ProxyConfig(
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
        this(
                listenHost,
                port,
                httpHost,
                httpPort,
                maxClientConnections,
                maxMessageSizeBytes,
                causalWaitTimeout,
                readConsistency,
                drainTimeout,
                compressors,
                transport,
                null,
                null);
    }

    /** {@code maxBufferedBytesPerConnection}, or its default. */
    public long bufferedBytesPerConnectionLimit() {
        return maxBufferedBytesPerConnection != null ? maxBufferedBytesPerConnection : 2L * maxMessageSizeBytes;
    }

    /** {@code maxBufferedBytes}, or its default. */
    public long bufferedBytesLimit() {
        return maxBufferedBytes != null ? maxBufferedBytes : 4L * maxMessageSizeBytes;
    }

    /** The schema before {@code readConsistency}: the default, {@code linearizable}. */
    public ProxyConfig(
            String listenHost,
            int port,
            String httpHost,
            int httpPort,
            int maxClientConnections,
            int maxMessageSizeBytes,
            Duration causalWaitTimeout,
            Duration drainTimeout,
            List<String> compressors,
            String transport) {
        this(
                listenHost,
                port,
                httpHost,
                httpPort,
                maxClientConnections,
                maxMessageSizeBytes,
                causalWaitTimeout,
                ReadConsistency.LINEARIZABLE,
                drainTimeout,
                compressors,
                transport);
    }

    public static ProxyConfig defaults() {
        return new ProxyConfig(
                "0.0.0.0",
                27017,
                "0.0.0.0",
                9090,
                10_000,
                MONGODB_MAX_MESSAGE_SIZE,
                Duration.ofSeconds(5),
                ReadConsistency.LINEARIZABLE,
                Duration.ofSeconds(30),
                List.of("zstd", "snappy", "zlib"),
                "auto");
    }
}
