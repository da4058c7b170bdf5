package io.thermocline.operator.archive;

import io.thermocline.operator.fasttier.tls.Pem;
import javax.net.ssl.SSLContext;

/** An SSLContext trusting exactly the CA certificates of a PEM bundle (the archive's CA Secret). */
final class PemTrust {

    private PemTrust() {
    }

    static SSLContext sslContext(String pem) {
        boolean none;
        try {
            none = Pem.certificates(pem).isEmpty();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the archive CA Secret is not a readable PEM bundle: " + e.getMessage());
        }
        if (none) {
            throw new IllegalArgumentException("the archive CA Secret holds no PEM certificate");
        }
        return Pem.trusting(pem);
    }
}
