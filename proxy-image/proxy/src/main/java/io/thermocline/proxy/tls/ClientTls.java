package io.thermocline.proxy.tls;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OptionalSslHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.thermocline.config.TlsConfig;
import io.thermocline.security.tls.CertificateSubject;
import io.thermocline.security.tls.PemTrust;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;

/**
 * TLS between clients and the proxy, with mongod's {@code net.tls.mode}: {@code disabled};
 * {@code allowed} and {@code preferred} take TLS and plain text on the same port (the first bytes
 * tell); {@code required} refuses plain text. TLS 1.2 and 1.3 only, through BoringSSL where it
 * loads and the JDK otherwise. The certificate and key files are read again when they change (a
 * rotated Secret): new connections get the new certificate, open ones keep theirs.
 */
public final class ClientTls {
    private static final Logger LOG = LoggerFactory.getLogger(ClientTls.class);
    private static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");
    private static final long CHECK_EVERY_NANOS = 1_000_000_000L;

    public enum Mode { DISABLED, ALLOWED, PREFERRED, REQUIRED }

    private final Mode mode;
    private final Path certificate;
    private final Path key;
    private final Path clientCa;
    /** A TLS client must present a certificate (mongod without {@code allowConnectionsWithoutCertificates}). */
    private final boolean certificateRequired;
    private final SslProvider provider;
    private volatile SslContext context;
    private volatile List<FileTime> loadedVersions;
    private volatile long checkedAt;

    private ClientTls(Mode mode, Path certificate, Path key, Path clientCa, boolean certificateRequired) {
        this.mode = mode;
        this.certificate = certificate;
        this.key = key;
        this.clientCa = clientCa;
        this.certificateRequired = certificateRequired;
        this.provider = OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        if (mode != Mode.DISABLED) {
            try {
                this.loadedVersions = versions();
                this.context = build();
            } catch (IOException e) {
                throw new IllegalArgumentException("tls: cannot read the certificate or key: " + e.getMessage(), e);
            }
            checkedAt = System.nanoTime();
            LOG.info("event=client_tls_ready mode={} provider={} certificate={} client_certificates={}", mode.name().toLowerCase(),
                    provider, certificate, clientCa == null ? "none" : certificateRequired ? "required" : "optional");
        }
    }

    public static ClientTls disabled() {
        return new ClientTls(Mode.DISABLED, null, null, null, false);
    }

    public static ClientTls from(TlsConfig tls) {
        Mode mode = Mode.valueOf(tls.normalizedMode().toUpperCase());
        return new ClientTls(mode, path(tls.certificateFile()), path(tls.keyFile()), path(tls.clientCaFile()),
                tls.clientCertificatesRequired());
    }

    public Mode mode() {
        return mode;
    }

    /** {@code OPENSSL} (BoringSSL) or {@code JDK}. */
    public SslProvider provider() {
        return provider;
    }

    /** The TLS hook of a new client channel: put the handler the mode asks for first in its pipeline. */
    public void install(ChannelPipeline pipeline) {
        if (mode == Mode.DISABLED) {
            return;
        }
        SslContext now = current();
        pipeline.addLast("tls-linger", new HandshakeFailureLinger());
        if (mode == Mode.REQUIRED) {
            pipeline.addLast("tls", now.newHandler(pipeline.channel().alloc()));
        } else {
            pipeline.addLast("tls", new OptionalSslHandler(now));
        }
    }

    /**
     * The subject of the client certificate verified on
     * {@code channel}'s TLS session, as mongod names it ({@link CertificateSubject}), if it has one (only asked for
     * with {@code tls.clientCaFile}).
     */
    public static Optional<String> verifiedSubject(Channel channel) {
        SslHandler ssl = channel.pipeline().get(SslHandler.class);
        if (ssl == null || !ssl.handshakeFuture().isSuccess()) {
            return Optional.empty();
        }
        try {
            Certificate[] peer = ssl.engine().getSession().getPeerCertificates();
            return peer.length > 0 && peer[0] instanceof X509Certificate x
                    ? CertificateSubject.of(x.getSubjectX500Principal()) : Optional.empty();
        } catch (SSLPeerUnverifiedException e) {
            return Optional.empty();
        }
    }

    private SslContext current() {
        long now = System.nanoTime();
        if (now - checkedAt >= CHECK_EVERY_NANOS) {
            synchronized (this) {
                if (now - checkedAt >= CHECK_EVERY_NANOS) {
                    checkedAt = now;
                    reloadIfChanged();
                }
            }
        }
        return context;
    }

    private void reloadIfChanged() {
        try {
            List<FileTime> versions = versions();
            if (versions.equals(loadedVersions)) {
                return;
            }
            context = build();
            loadedVersions = versions;
            LOG.info("event=client_tls_reloaded certificate={}", certificate);
        } catch (IOException | RuntimeException e) {
            // Mid-rotation the key may not match the certificate yet: keep serving the old pair and try again.
            LOG.warn("event=client_tls_reload_failed certificate={} action=\"keeping the previous certificate\" error=\"{}\"",
                    certificate, e.getMessage());
        }
    }

    private List<FileTime> versions() throws IOException {
        return clientCa == null ? List.of(Files.getLastModifiedTime(certificate), Files.getLastModifiedTime(key))
                : List.of(Files.getLastModifiedTime(certificate), Files.getLastModifiedTime(key), Files.getLastModifiedTime(clientCa));
    }

    private SslContext build() throws SSLException {
        SslContextBuilder b = SslContextBuilder.forServer(certificate.toFile(), key.toFile()).sslProvider(provider).protocols(PROTOCOLS);
        if (clientCa != null) {
            // OPTIONAL, as mongod with tlsAllowConnectionsWithoutCertificates: no certificate is fine, an untrusted one fails
            // the handshake; REQUIRE fails it without one too (certificate_required in TLS 1.3, handshake_failure in 1.2)
            b.trustManager(new ClientCertificateTrust(PemTrust.trustManagers(clientCa)))
                    .clientAuth(certificateRequired ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL);
        }
        return b.build();
    }

    private static Path path(String file) {
        return file == null || file.isBlank() ? null : Path.of(file);
    }

    @Override
    public String toString() {
        return mode == Mode.DISABLED ? "disabled" : mode.name().toLowerCase() + "/" + provider;
    }
}
