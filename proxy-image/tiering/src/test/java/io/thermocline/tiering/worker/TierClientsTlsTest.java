package io.thermocline.tiering.worker;

import com.mongodb.connection.SslSettings;
import io.thermocline.config.TlsConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The workers' driver clients: a tier URI asking for TLS gets TLS (the system trust store without tls.tierCaFile), host names checked. */
class TierClientsTlsTest {
    @Test
    void aUriAskingForTlsWithoutACaFileUsesTlsWithHostNamesChecked() {
        SslSettings ssl = TierClients.settings("mongodb://db.example.com:27017/?tls=true", TlsConfig.defaults()).build().getSslSettings();
        assertThat(ssl.isEnabled()).isTrue();
        assertThat(ssl.isInvalidHostNameAllowed()).isFalse();
        assertThat(ssl.getContext()).as("the driver's default: the JDK's system trust store").isNull();
        assertThat(TierClients.settings("mongodb://db.example.com:27017/", TlsConfig.defaults()).build().getSslSettings().isEnabled()).isFalse();
    }
}
