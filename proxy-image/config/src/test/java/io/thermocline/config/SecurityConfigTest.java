package io.thermocline.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecurityConfigTest {
    private static final String ARCHIVE =
            "tiers: {archive: {uri: 'mongodb://proxy:secret-pw@a:27017/?replicaSet=rs0'}}\n";

    @Test
    void authenticationIsRequiredByDefaultWithTheArchivesUsersAndTlsIsOff() {
        ThermoclineConfig c = ConfigLoader.parse(ARCHIVE, Map.of());
        assertThat(c.auth().mode()).isEqualTo("required");
        assertThat(c.auth().users()).containsExactly("archive");
        assertThat(c.auth().refreshInterval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.tls().normalizedMode()).isEqualTo("disabled");
    }

    @Test
    void usersFileAndTlsFilesAreCheckedAndMongodSpellingsAccepted(@TempDir Path dir) throws Exception {
        Path users = Files.writeString(dir.resolve("users.yaml"), "users: []\n");
        Path cert = Files.writeString(dir.resolve("tls.crt"), "x");
        Path key = Files.writeString(dir.resolve("tls.key"), "x");
        ThermoclineConfig c = ConfigLoader.parse(
                ARCHIVE + "auth: {users: [archive, file], usersFile: '" + users + "', refreshInterval: 5s}\n"
                        + "tls: {mode: requireTLS, certificateFile: '" + cert + "', keyFile: '" + key + "'}\n",
                Map.of());
        assertThat(c.auth().users()).containsExactly("archive", "file");
        assertThat(c.auth().refreshInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.tls().normalizedMode()).isEqualTo("required");
    }

    @Test
    void environmentOverridesReachTheNewSections() {
        ThermoclineConfig c =
                ConfigLoader.parse(ARCHIVE, Map.of("THERMOCLINE_AUTH_MODE", "disabled", "THERMOCLINE_AUTH_USERS", ""));
        assertThat(c.auth().mode()).isEqualTo("disabled");
        assertThat(c.auth().users()).isEmpty();
    }

    @Test
    void everyMistakeIsNamedWithItsFixAndNoSecretIsEchoed() {
        assertThatThrownBy(() -> ConfigLoader.parse(
                        ARCHIVE + "auth: {mode: maybe, users: [ldap, file]}\n" + "tls: {mode: sometimes}\n", Map.of()))
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> {
                    assertThat(e.problems())
                            .anySatisfy(m -> assertThat(m).startsWith("auth.mode: 'maybe' is not a mode"));
                    assertThat(e.problems())
                            .anySatisfy(m -> assertThat(m).startsWith("auth.users: 'ldap' is not a user source"));
                    assertThat(e.problems()).anySatisfy(m -> assertThat(m).startsWith("auth.usersFile: missing"));
                    assertThat(e.problems())
                            .anySatisfy(m -> assertThat(m).startsWith("tls.mode: 'sometimes' is not a mode"));
                    assertThat(String.join("\n", e.problems())).doesNotContain("secret-pw");
                });
        assertThatThrownBy(() -> ConfigLoader.parse(
                        ARCHIVE + "auth: {users: []}\ntls: {mode: preferred, certificateFile: /nope.crt}\n", Map.of()))
                .isInstanceOfSatisfying(
                        InvalidConfigException.class,
                        e -> assertThat(e.problems())
                                .contains(
                                        "auth.users: empty while auth.mode is required, so nobody could log in; use archive and/or file, or set auth.mode: disabled",
                                        "tls.certificateFile: /nope.crt cannot be read; mount the proxy's PEM certificate chain there or fix the path",
                                        "tls.keyFile: missing; give the path of the PEM private key of that certificate"));
    }

    @Test
    void clientCertificatesAreOptionalUnlessAllowConnectionsWithoutCertificatesIsFalseWhichNeedsAClientCa(
            @TempDir Path dir) throws Exception {
        Path cert = Files.writeString(dir.resolve("tls.crt"), "x");
        Path key = Files.writeString(dir.resolve("tls.key"), "x");
        Path ca = Files.writeString(dir.resolve("ca.crt"), "x");
        String files = "tls: {mode: required, certificateFile: '" + cert + "', keyFile: '" + key + "'";
        assertThat(ConfigLoader.parse(ARCHIVE + files + ", clientCaFile: '" + ca + "'}\n", Map.of())
                        .tls()
                        .clientCertificatesRequired())
                .as("a CA alone keeps certificates optional, as configs from before the setting expect")
                .isFalse();
        ThermoclineConfig required = ConfigLoader.parse(
                ARCHIVE + files + ", clientCaFile: '" + ca + "', allowConnectionsWithoutCertificates: false}\n",
                Map.of());
        assertThat(required.tls().clientCertificatesRequired()).isTrue();
        assertThat(ConfigLoader.parse(ConfigWriter.toYaml(required), Map.of()).tls())
                .isEqualTo(required.tls());
        assertThatThrownBy(() -> ConfigLoader.parse(
                        ARCHIVE + files + ", allowConnectionsWithoutCertificates: false}\n", Map.of()))
                .isInstanceOfSatisfying(
                        InvalidConfigException.class,
                        e -> assertThat(e.problems())
                                .contains(
                                        "tls.allowConnectionsWithoutCertificates: false needs tls.clientCaFile, the CAs that verify the"
                                                + " certificates it requires; set tls.clientCaFile or drop the setting"));
    }

    @Test
    void writtenConfigsLoadBackWithTheirSecuritySections(@TempDir Path dir) throws Exception {
        ThermoclineConfig c = ConfigLoader.parse(ARCHIVE + "auth: {mode: disabled, users: []}\n", Map.of());
        ThermoclineConfig back = ConfigLoader.parse(ConfigWriter.toYaml(c), Map.of());
        assertThat(back.auth()).isEqualTo(c.auth());
        assertThat(back.tls()).isEqualTo(c.tls());
        assertThat(List.of(back.auth().mode())).containsExactly("disabled");
    }
}
