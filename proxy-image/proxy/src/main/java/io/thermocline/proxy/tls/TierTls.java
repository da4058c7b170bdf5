package io.thermocline.proxy.tls;

import com.mongodb.ConnectionString;
import com.mongodb.ServerAddress;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.thermocline.config.TlsConfig;
import io.thermocline.security.tls.PemTrust;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.nio.file.Path;
import java.util.List;

/**
 * TLS on the proxy's pooled connections to the tiers: with {@code tls.tierCaFile} to both tiers, trusting
 * only those CAs; otherwise to a tier whose connection string asks for it ({@code tls=true} or
 * {@code ssl=true}), trusting the JDK's system trust store, as the drivers do. A connection asked to use
 * TLS never falls back to plain text, and the member's host name must match its certificate.
 */
public final class TierTls {
    private static final TierTls OFF = new TierTls(null);

    private final SslContext context;

    private TierTls(SslContext context) {
        this.context = context;
    }

    public static TierTls off() {
        return OFF;
    }

    /** The TLS a tier reached by {@code uri} gets: this one when configured, the system trust when the URI asks for TLS, or none. */
    public TierTls forTier(ConnectionString uri) {
        if (enabled() || !Boolean.TRUE.equals(uri.getSslEnabled())) {
            return this;
        }
        try {
            // no trust manager given: Netty uses the JDK's default one, the system trust store (javax.net.ssl.trustStore)
            return new TierTls(SslContextBuilder.forClient().protocols(List.of("TLSv1.3", "TLSv1.2")).build());
        } catch (SSLException e) {
            throw new IllegalArgumentException("TLS to the tier " + uri.getHosts() + " with the system trust store: " + e.getMessage(), e);
        }
    }

    public static TierTls from(TlsConfig tls) {
        if (tls.tierCaFile() == null || tls.tierCaFile().isBlank()) {
            return OFF;
        }
        try {
            return new TierTls(SslContextBuilder.forClient().trustManager(PemTrust.trustManagers(Path.of(tls.tierCaFile())))
                    .protocols(List.of("TLSv1.3", "TLSv1.2")).build());
        } catch (SSLException e) {
            throw new IllegalArgumentException("tls.tierCaFile: " + e.getMessage(), e);
        }
    }

    public boolean enabled() {
        return context != null;
    }

    /** The handler for a connection to {@code member}, checking its host name. */
    public SslHandler handler(ByteBufAllocator alloc, ServerAddress member) {
        SslHandler handler = context.newHandler(alloc, member.getHost(), member.getPort());
        SSLEngine engine = handler.engine();
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(parameters);
        return handler;
    }
}
