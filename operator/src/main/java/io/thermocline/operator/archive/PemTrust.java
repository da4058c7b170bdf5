package io.thermocline.operator.archive;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** An SSLContext trusting exactly the CA certificates of a PEM bundle (the archive's CA Secret). */
final class PemTrust {

    private PemTrust() {
    }

    static SSLContext sslContext(String pem) {
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate cert : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                store.setCertificateEntry("ca-" + i++, cert);
            }
            if (i == 0) {
                throw new IllegalArgumentException("the archive CA Secret holds no PEM certificate");
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("the archive CA Secret is not a readable PEM bundle: " + e.getMessage());
        }
    }
}
