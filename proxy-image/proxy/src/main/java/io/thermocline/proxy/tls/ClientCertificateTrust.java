package io.thermocline.proxy.tls;

import io.netty.handler.ssl.OpenSslCertificateException;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;

/**
 * Verifies client certificates against {@code tls.clientCaFile}. A refused certificate fails the
 * handshake with the alert OpenSSL (and so mongod) sends, {@code unknown_ca}, rather than BoringSSL's
 * {@code internal_error} for a verifier's unmapped exception: the client's error then says what is wrong.
 */
final class ClientCertificateTrust extends X509ExtendedTrustManager {
    /** OpenSSL's X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, which BoringSSL reports as the {@code unknown_ca} alert. */
    private static final int UNKNOWN_ISSUER = 20;

    private final X509ExtendedTrustManager trust;

    ClientCertificateTrust(TrustManagerFactory factory) {
        this.trust = Arrays.stream(factory.getTrustManagers()).filter(t -> t instanceof X509ExtendedTrustManager)
                .map(t -> (X509ExtendedTrustManager) t).findFirst()
                .orElseThrow(() -> new IllegalStateException("the JDK's trust manager factory made no X509ExtendedTrustManager"));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        verify(chain, () -> trust.checkClientTrusted(chain, authType, engine));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        verify(chain, () -> trust.checkClientTrusted(chain, authType, socket));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        verify(chain, () -> trust.checkClientTrusted(chain, authType));
    }

    private interface Check {
        void run() throws CertificateException;
    }

    private static void verify(X509Certificate[] chain, Check check) throws CertificateException {
        try {
            check.run();
        } catch (CertificateException e) {
            throw refused(chain, e);
        }
    }

    /** Expired or not yet valid keep their own exceptions (and alerts); any other refusal is an unknown issuer. */
    private static CertificateException refused(X509Certificate[] chain, CertificateException e) {
        if (e instanceof java.security.cert.CertificateExpiredException || e instanceof java.security.cert.CertificateNotYetValidException
                || e instanceof OpenSslCertificateException) {
            return e;
        }
        String subject = chain.length > 0 ? chain[0].getSubjectX500Principal().getName() : "(none)";
        OpenSslCertificateException out = new OpenSslCertificateException("client certificate " + subject
                + " is not signed by a CA of tls.clientCaFile: " + e.getMessage(), UNKNOWN_ISSUER);
        out.initCause(e);
        return out;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        throw new CertificateException("client certificates only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        throw new CertificateException("client certificates only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("client certificates only");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return trust.getAcceptedIssuers();
    }
}
