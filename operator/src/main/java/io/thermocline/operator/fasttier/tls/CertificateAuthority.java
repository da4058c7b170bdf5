package io.thermocline.operator.fasttier.tls;

import java.io.IOException;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The operator's own CA for the fast tier (BouncyCastle builds the X.509; keys are EC P-256, which
 * every supported mongod and driver accepts over TLS 1.2+). One server certificate serves every
 * member: its SANs name each member's headless-Service host, the Service's wildcard and localhost
 * (the probes); its extended key usages are server and client auth, since members present it to
 * each other too.
 */
public final class CertificateAuthority {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String SIGNATURE = "SHA256withECDSA";

    /** A CA: its certificate and key, PEM. */
    public record Issued(String certificatePem, String keyPem, X509Certificate certificate) {
    }

    private CertificateAuthority() {
    }

    public static Issued newCa(String commonName, Instant now, Duration validity) {
        KeyPair keys = ecKeys();
        X500Name subject = new X500Name("CN=" + commonName + ",O=thermocline");
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(), Date.from(now.minusSeconds(300)),
                Date.from(now.plus(validity)), subject, keys.getPublic());
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
            return sign(builder, keys.getPrivate(), keys);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("CA generation failed", e);
        }
    }

    /** A server-and-client certificate for {@code dnsNames} (and 127.0.0.1), signed by {@code ca}. */
    public static Issued issue(Issued ca, String commonName, List<String> dnsNames, Instant now, Duration validity) {
        KeyPair keys = ecKeys();
        GeneralName[] names = new GeneralName[dnsNames.size() + 1];
        for (int i = 0; i < dnsNames.size(); i++) {
            names[i] = new GeneralName(GeneralName.dNSName, dnsNames.get(i));
        }
        names[dnsNames.size()] = new GeneralName(GeneralName.iPAddress, "127.0.0.1");
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(ca.certificate(), serial(),
                Date.from(now.minusSeconds(300)), Date.from(now.plus(validity)),
                new X500Name("CN=" + commonName + ",O=thermocline"), keys.getPublic());
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement))
                    .addExtension(Extension.extendedKeyUsage, false,
                            new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
                    .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names))
                    .addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(ca.certificate()));
            return sign(builder, Pem.privateKey(ca.keyPem()), keys);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("certificate generation failed", e);
        }
    }

    private static Issued sign(X509v3CertificateBuilder builder, PrivateKey signer, KeyPair keys) throws GeneralSecurityException {
        try {
            X509Certificate cert = new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder(SIGNATURE).build(signer)));
            return new Issued(Pem.of(cert), Pem.of(keys.getPrivate()), cert);
        } catch (OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    private static KeyPair ecKeys() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("EC key generation failed", e);
        }
    }

    private static BigInteger serial() {
        return new BigInteger(127, RANDOM);
    }
}
