package io.thermocline.security.tls;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import javax.security.auth.x500.X500Principal;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The subject string mongod's x.509 login compares with the user's name ({@code SSLX509Name::toString()}),
 * from certificate subjects the JDK encodes. The JDK's own RFC 2253 form differs for types without an RFC 2253
 * keyword, non-ASCII values and prepared (mapped, NFKC) values.
 */
@Timeout(10)
class CertificateSubjectTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '\'', value = {
            // the JDK's string form of the subject (RFC 2253 order) | what mongod names the user
            "CN=app,OU=shop,O=Thermocline | CN=app,OU=shop,O=Thermocline",
            // a multi-valued RDN: DER sorts its attributes (CN's encoding is shorter, so first), mongod lists them backwards
            "CN=ana+UID=a1,O=Thermocline | UID=a1+CN=ana,O=Thermocline",
            "UID=a1+CN=ana,O=Thermocline | UID=a1+CN=ana,O=Thermocline",
            // types without an RFC 2253 keyword: OpenSSL's short name and the value as text (the JDK: #hex)
            "1.2.840.113549.1.9.1=ana@example.com,CN=ana | emailAddress=ana@example.com,CN=ana",
            "2.5.4.42=Ana,2.5.4.4=Ng,2.5.4.5=42,CN=ana | GN=Ana,SN=Ng,serialNumber=42,CN=ana",
            "1.3.6.1.4.1.99999.1=x,CN=ana | 1.3.6.1.4.1.99999.1=x,CN=ana",
            // escaping: the RFC 2253 specials, a leading '#' or space
            "'CN=R&D\\, Berlin\\+\\<x\\>\\;\\\"q\\\"\\\\' | 'CN=R&D\\, Berlin\\+\\<x\\>\\;\\\"q\\\"\\\\'",
            "'CN=\\#1' | 'CN=\\#1'",
            "'CN=\\ lead' | 'CN=\\ lead'",
            // a trailing space is escaped only past two characters (mongod's escapeRfc2253)
            "'CN=ab\\ ' | 'CN=ab\\ '",
            "'CN=a\\ ' | 'CN=a '",
            // non-ASCII: every UTF-8 byte as \\XX (the JDK prints the characters)
            "CN=Müller,O=Zürich | CN=M\\C3\\BCller,O=Z\\C3\\BCrich",
            // NFKC and RFC 4518's mapping: a ligature decomposed, a soft hyphen dropped, a no-break space made a space
            "CN=\uFB01le,OU=a\u00ADb,O=x\u00A0y | CN=file,OU=ab,O=x y",
            // a BMPString is text too
            "CN=#1e06006100700070 | CN=app",
    })
    void subjectsAreNamedAsMongodNamesThem(String jdkForm, String mongod) {
        assertThat(CertificateSubject.of(new X500Principal(jdkForm))).contains(mongod);
    }

    @Test
    void caseAndSpacingOfTheCertificateAreKeptAsTheyAre() {
        // mongod does not canonicalise: a user named in another spelling is another user
        assertThat(CertificateSubject.of(new X500Principal("cn=App, ou=Shop"))).contains("CN=App,OU=Shop");
        assertThat(CertificateSubject.of(new X500Principal("CN=APP,OU=shop"))).contains("CN=APP,OU=shop");
    }

    @Test
    void aValueMongodCouldNotPrepareGivesNoSubject() {
        // a UTF8String that is not UTF-8: mongod's normalisation fails and it refuses the connection
        assertThat(CertificateSubject.of(new X500Principal("CN=#0c02c328"))).isEmpty();
    }

    @Test
    void escapingWorksOnTheValuesBytes() {
        assertThat(CertificateSubject.escaped(" ".getBytes(StandardCharsets.UTF_8))).isEqualTo("\\ ");
        assertThat(CertificateSubject.escaped("é".getBytes(StandardCharsets.UTF_8))).isEqualTo("\\C3\\A9");
        assertThat(CertificateSubject.escaped(new byte[0])).isEmpty();
    }
}
