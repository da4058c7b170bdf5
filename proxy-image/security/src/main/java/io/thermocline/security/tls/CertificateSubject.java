package io.thermocline.security.tls;

import javax.security.auth.x500.X500Principal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A certificate's subject as mongod (5.0 to 8.0) names the {@code $external} user of an x.509 login:
 * its {@code SSLX509Name::toString()}. mongod compares that string with the user's name exactly, so
 * the proxy must produce the same string, which is not the JDK's RFC 2253 form:
 * <ul>
 * <li>RDNs last to first (RFC 2253 order), and the attributes of a multi-valued RDN reversed too
 *     (mongod walks OpenSSL's entry list backwards);</li>
 * <li>attribute types by OpenSSL's short names ({@code CN}, {@code emailAddress}, {@code GN},
 *     {@code serialNumber} ...), other types as their dotted OID with the value as text (the JDK
 *     prints those as {@code #hex} DER);</li>
 * <li>string values prepared as mongod's ICU profile does (RFC 4518 mapping, NFKC), then escaped as
 *     its {@code escapeRfc2253}: {@code , + " \ < > ;} with a backslash, a leading space or
 *     {@code #}, a trailing space (only past the value's second character), and every byte of a
 *     non-ASCII character as {@code \XX} of its UTF-8 (the JDK leaves those as they are).</li>
 * </ul>
 * A value mongod could not prepare (not UTF-8) makes mongod refuse the connection: here there is no
 * subject, so an x.509 login fails.
 */
public final class CertificateSubject {
    private static final Map<String, String> SHORT_NAMES = Map.ofEntries(
            Map.entry("0.9.2342.19200300.100.1.1", "UID"), Map.entry("0.9.2342.19200300.100.1.25", "DC"),
            Map.entry("1.2.840.113549.1.9.1", "emailAddress"), Map.entry("2.5.29.17", "subjectAltName"),
            Map.entry("2.5.4.3", "CN"), Map.entry("2.5.4.4", "SN"), Map.entry("2.5.4.5", "serialNumber"),
            Map.entry("2.5.4.6", "C"), Map.entry("2.5.4.7", "L"), Map.entry("2.5.4.8", "ST"), Map.entry("2.5.4.9", "street"),
            Map.entry("2.5.4.10", "O"), Map.entry("2.5.4.11", "OU"), Map.entry("2.5.4.12", "title"),
            Map.entry("2.5.4.13", "description"), Map.entry("2.5.4.14", "searchGuide"), Map.entry("2.5.4.15", "businessCategory"),
            Map.entry("2.5.4.16", "postalAddress"), Map.entry("2.5.4.17", "postalCode"), Map.entry("2.5.4.18", "postOfficeBox"),
            Map.entry("2.5.4.19", "physicalDeliveryOfficeName"), Map.entry("2.5.4.20", "telephoneNumber"),
            Map.entry("2.5.4.21", "telexNumber"), Map.entry("2.5.4.22", "teletexTerminalIdentifier"),
            Map.entry("2.5.4.23", "facsimileTelephoneNumber"), Map.entry("2.5.4.24", "x121Address"),
            Map.entry("2.5.4.25", "internationaliSDNNumber"), Map.entry("2.5.4.26", "registeredAddress"),
            Map.entry("2.5.4.27", "destinationIndicator"), Map.entry("2.5.4.28", "preferredDeliveryMethod"),
            Map.entry("2.5.4.29", "presentationAddress"), Map.entry("2.5.4.30", "supportedApplicationContext"),
            Map.entry("2.5.4.31", "member"), Map.entry("2.5.4.32", "owner"), Map.entry("2.5.4.33", "roleOccupant"),
            Map.entry("2.5.4.34", "seeAlso"), Map.entry("2.5.4.35", "userPassword"), Map.entry("2.5.4.36", "userCertificate"),
            Map.entry("2.5.4.37", "cACertificate"), Map.entry("2.5.4.38", "authorityRevocationList"),
            Map.entry("2.5.4.39", "certificateRevocationList"), Map.entry("2.5.4.40", "crossCertificatePair"),
            Map.entry("2.5.4.41", "name"), Map.entry("2.5.4.42", "GN"), Map.entry("2.5.4.43", "initials"),
            Map.entry("2.5.4.44", "generationQualifier"), Map.entry("2.5.4.45", "x500UniqueIdentifier"),
            Map.entry("2.5.4.46", "dnQualifier"), Map.entry("2.5.4.47", "enhancedSearchGuide"),
            Map.entry("2.5.4.48", "protocolInformation"), Map.entry("2.5.4.49", "distinguishedName"),
            Map.entry("2.5.4.50", "uniqueMember"), Map.entry("2.5.4.51", "houseIdentifier"),
            Map.entry("2.5.4.52", "supportedAlgorithms"), Map.entry("2.5.4.53", "deltaRevocationList"),
            Map.entry("2.5.4.54", "dmdName"), Map.entry("2.5.4.65", "pseudonym"), Map.entry("2.5.4.72", "role"));

    private static final int SEQUENCE = 0x30;
    private static final int SET = 0x31;
    private static final int OID = 0x06;
    private static final int OCTET_STRING = 0x04;
    private static final int UTF8_STRING = 0x0C;
    private static final int PRINTABLE_STRING = 0x13;
    private static final int TELETEX_STRING = 0x14;
    private static final int IA5_STRING = 0x16;
    private static final int UNIVERSAL_STRING = 0x1C;
    private static final int BMP_STRING = 0x1E;

    private CertificateSubject() {
    }

    /** One attribute of an RDN: its OID and its value's bytes after mongod's preparation. */
    private record Attribute(String oid, byte[] value) {
    }

    /** A DER element: its tag and where its content lies in {@code der}. */
    private record Element(int tag, int start, int end) {
    }

    /** mongod's name for {@code subject}, or empty when mongod could not prepare one of its values. */
    public static Optional<String> of(X500Principal subject) {
        byte[] der = subject.getEncoded();
        try {
            Element name = read(der, 0);
            expect(name, SEQUENCE);
            List<List<Attribute>> rdns = new ArrayList<>();
            for (Element set : children(der, name)) {
                expect(set, SET);
                List<Attribute> rdn = new ArrayList<>();
                for (Element ava : children(der, set)) {
                    expect(ava, SEQUENCE);
                    List<Element> parts = children(der, ava);
                    if (parts.size() != 2) {
                        throw new IllegalArgumentException("an attribute is an OID and a value");
                    }
                    expect(parts.get(0), OID);
                    rdn.add(new Attribute(oid(der, parts.get(0)), prepared(der, parts.get(1))));
                }
                Collections.reverse(rdn);
                rdns.add(rdn);
            }
            Collections.reverse(rdns);
            return Optional.of(format(rdns));
        } catch (IllegalArgumentException | CharacterCodingException e) {
            return Optional.empty();
        }
    }

    private static String format(List<List<Attribute>> rdns) {
        StringBuilder out = new StringBuilder();
        for (List<Attribute> rdn : rdns) {
            if (!out.isEmpty()) {
                out.append(',');
            }
            for (int i = 0; i < rdn.size(); i++) {
                Attribute a = rdn.get(i);
                out.append(i == 0 ? "" : "+").append(SHORT_NAMES.getOrDefault(a.oid(), a.oid())).append('=').append(escaped(a.value()));
            }
        }
        return out.toString();
    }

    /** mongod's {@code escapeRfc2253}, on the value's bytes, quirks included. */
    static String escaped(byte[] value) {
        StringBuilder out = new StringBuilder();
        int pos = 0;
        if (value.length > 0 && (value[0] == ' ' || value[0] == '#')) {
            out.append('\\').append((char) value[0]);
            pos = 1;
        }
        for (; pos < value.length; pos++) {
            byte b = value[pos];
            if (b < 0) {
                out.append('\\').append(String.format("%02X", b & 0xFF));
            } else {
                if (",+\"\\<>;".indexOf(b) >= 0) {
                    out.append('\\');
                }
                out.append((char) b);
            }
        }
        // mongod escapes a trailing space only once the escaped value is longer than two characters
        if (out.length() > 2 && out.charAt(out.length() - 1) == ' ') {
            out.setCharAt(out.length() - 1, '\\');
            out.append(' ');
        }
        return out.toString();
    }

    /** The value's bytes as mongod keeps them: the directory string types prepared (RFC 4518 mapping, NFKC), others raw. */
    private static byte[] prepared(byte[] der, Element value) throws CharacterCodingException {
        byte[] raw = java.util.Arrays.copyOfRange(der, value.start(), value.end());
        String text;
        switch (value.tag()) {
            case UTF8_STRING, PRINTABLE_STRING, TELETEX_STRING, IA5_STRING, OCTET_STRING ->
                    text = strict(StandardCharsets.UTF_8, raw);
            case BMP_STRING -> text = strict(StandardCharsets.UTF_16BE, raw);
            case UNIVERSAL_STRING -> text = strict(Charset.forName("UTF-32BE"), raw);
            default -> {
                return raw;
            }
        }
        return raw.length == 0 ? raw : Normalizer.normalize(mapped(text), Normalizer.Form.NFKC).getBytes(StandardCharsets.UTF_8);
    }

    private static String strict(Charset charset, byte[] raw) throws CharacterCodingException {
        return charset.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(raw)).toString();
    }

    /** RFC 4518 section 2.2: control and formatting characters to nothing, white space and separators to a space. */
    private static String mapped(String text) {
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().forEach(c -> {
            if ((c >= 0x09 && c <= 0x0D) || c == 0x85 || Character.getType(c) == Character.SPACE_SEPARATOR
                    || c == 0x2028 || c == 0x2029) {
                out.append(' ');
            } else if (!toNothing(c)) {
                out.appendCodePoint(c);
            }
        });
        return out.toString();
    }

    private static boolean toNothing(int c) {
        return c <= 0x08 || (c >= 0x0E && c <= 0x1F) || (c >= 0x7F && c <= 0x84) || (c >= 0x86 && c <= 0x9F)
                || c == 0xAD || c == 0x1806 || c == 0x034F || (c >= 0x180B && c <= 0x180E) || (c >= 0xFE00 && c <= 0xFE0F)
                || c == 0xFFFC || c == 0x200B || c == 0x06DD || c == 0x070F || (c >= 0x200C && c <= 0x200F)
                || (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x2063) || (c >= 0x206A && c <= 0x206F)
                || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || (c >= 0x1D173 && c <= 0x1D17A) || c == 0xE0001
                || (c >= 0xE0020 && c <= 0xE007F);
    }

    private static String oid(byte[] der, Element e) {
        StringBuilder out = new StringBuilder();
        long value = 0;
        boolean first = true;
        for (int i = e.start(); i < e.end(); i++) {
            value = (value << 7) | (der[i] & 0x7F);
            if ((der[i] & 0x80) == 0) {
                if (first) {
                    long top = Math.min(value / 40, 2);
                    out.append(top).append('.').append(value - top * 40);
                    first = false;
                } else {
                    out.append('.').append(value);
                }
                value = 0;
            }
        }
        return out.toString();
    }

    private static List<Element> children(byte[] der, Element parent) {
        List<Element> out = new ArrayList<>();
        int at = parent.start();
        while (at < parent.end()) {
            Element child = read(der, at);
            if (child.end() > parent.end()) {
                throw new IllegalArgumentException("an element runs past its parent");
            }
            out.add(child);
            at = child.end();
        }
        return out;
    }

    /** The element at {@code at}: one-byte tags (all a name uses), short and long lengths. */
    private static Element read(byte[] der, int at) {
        if (at + 2 > der.length) {
            throw new IllegalArgumentException("truncated DER");
        }
        int tag = der[at] & 0xFF;
        int length = der[at + 1] & 0xFF;
        int start = at + 2;
        if (length > 0x80) {
            int bytes = length & 0x7F;
            if (bytes > 3 || start + bytes > der.length) {
                throw new IllegalArgumentException("bad DER length");
            }
            length = 0;
            for (int i = 0; i < bytes; i++) {
                length = (length << 8) | (der[start + i] & 0xFF);
            }
            start += bytes;
        } else if (length == 0x80) {
            throw new IllegalArgumentException("indefinite length is not DER");
        }
        if (start + length > der.length) {
            throw new IllegalArgumentException("truncated DER");
        }
        return new Element(tag, start, start + length);
    }

    private static void expect(Element e, int tag) {
        if (e.tag() != tag) {
            throw new IllegalArgumentException("unexpected DER tag " + e.tag());
        }
    }
}
