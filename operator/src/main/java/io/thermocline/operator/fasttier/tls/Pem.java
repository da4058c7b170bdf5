package io.thermocline.operator.fasttier.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;

/** PEM text of certificates and keys, as Secrets hold them and mongod reads them. */
public final class Pem {

    private Pem() {
    }

    public static String of(Object certificateOrKey) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            if (certificateOrKey instanceof PrivateKey key) { // PKCS#8 ("PRIVATE KEY"): what OpenSSL, mongod and the JDK all read
                writer.writeObject(new JcaPKCS8Generator(key, null));
            } else {
                writer.writeObject(certificateOrKey);
            }
        } catch (IOException e) {
            throw new IllegalStateException("PEM encoding failed", e);
        }
        return out.toString();
    }

    /** Every certificate of a PEM bundle; empty when there is none. */
    public static List<X509Certificate> certificates(String pem) {
        if (pem == null || pem.isBlank()) {
            return List.of();
        }
        try {
            return CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII))).stream()
                    .map(X509Certificate.class::cast).toList();
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not a PEM certificate: " + e.getMessage(), e);
        }
    }

    public static PrivateKey privateKey(String pem) {
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            Object parsed = parser.readObject();
            JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
            if (parsed instanceof PEMKeyPair pair) {
                return converter.getPrivateKey(pair.getPrivateKeyInfo());
            }
            if (parsed instanceof PrivateKeyInfo info) {
                return converter.getPrivateKey(info);
            }
            throw new IllegalArgumentException("no PEM private key");
        } catch (IOException e) {
            throw new IllegalArgumentException("not a PEM private key: " + e.getMessage(), e);
        }
    }

    /** An SSLContext trusting exactly the certificates of {@code bundle}. */
    public static SSLContext trusting(String bundle) {
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (X509Certificate cert : certificates(bundle)) {
                store.setCertificateEntry("ca-" + i++, cert);
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("the CA bundle is not usable: " + e.getMessage(), e);
        }
    }
}
