package io.thermocline.proxy.auth;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import io.thermocline.config.TlsConfig;
import io.thermocline.proxy.tls.PemTrust;
import java.nio.file.Path;

/**
 * Driver settings for the data plane's own clients of a tier: the connection string as given
 * (its credentials are the data plane's user), and TLS with the CA file of {@code tls.tierCaFile}
 * and host names checked, when one is configured.
 */
public final class TierClientSettings {
    private TierClientSettings() {
    }

    public static MongoClientSettings.Builder of(String uri, TlsConfig tls) {
        MongoClientSettings.Builder b = MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri));
        if (tls.tierCaFile() != null && !tls.tierCaFile().isBlank()) {
            b.applyToSslSettings(ssl -> ssl.enabled(true).invalidHostNameAllowed(false)
                    .context(PemTrust.sslContext(Path.of(tls.tierCaFile()))));
        }
        return b;
    }
}
