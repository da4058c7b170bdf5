package io.thermocline.proxy;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;

import java.math.BigInteger;
import java.time.Instant;

/** CAs and server certificates made in the test (Netty's pkitesting), valid for an hour. */
final class TestCertificates {
    private TestCertificates() {
    }

    static X509Bundle ca(String name) throws Exception {
        return new CertificateBuilder().subject("CN=" + name).setIsCertificateAuthority(true).ecp256()
                .notBefore(Instant.now().minusSeconds(60)).notAfter(Instant.now().plusSeconds(3600)).buildSelfSigned();
    }

    /** A server certificate for {@code host} (an IP address or a DNS name), signed by {@code ca}. */
    static X509Bundle server(X509Bundle ca, String host, long serial) throws Exception {
        CertificateBuilder b = new CertificateBuilder().subject("CN=" + host).serial(BigInteger.valueOf(serial)).ecp256()
                .notBefore(Instant.now().minusSeconds(60)).notAfter(Instant.now().plusSeconds(3600)).addExtendedKeyUsageServerAuth();
        if (host.equals("127.0.0.1")) {
            b.addSanIpAddress("127.0.0.1");
        } else {
            b.addSanDnsName(host);
        }
        return b.buildIssuedBy(ca);
    }
}
