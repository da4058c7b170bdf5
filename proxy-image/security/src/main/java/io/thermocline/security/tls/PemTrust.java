package io.thermocline.security.tls;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;

/** Trust in the CAs of one PEM file (e.g. the CA the operator mounts for the tiers), for the drivers' TLS settings. */
public final class PemTrust {
    private PemTrust() {
    }

    public static TrustManagerFactory trustManagers(Path caFile) {
        try (InputStream in = Files.newInputStream(caFile)) {
            Collection<? extends Certificate> cas = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (cas.isEmpty()) {
                throw new IllegalArgumentException(caFile + " holds no PEM certificate");
            }
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate ca : cas) {
                store.setCertificateEntry("ca-" + i++, ca);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            return tmf;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("CA file " + caFile + " cannot be used: " + e.getMessage(), e);
        }
    }

    /** A client context that trusts only those CAs (TLS 1.2 and 1.3). */
    public static SSLContext sslContext(Path caFile) {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trustManagers(caFile).getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK always has TLS", e);
        }
    }
}
