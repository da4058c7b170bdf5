package io.thermocline.operator.archive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The real probe's failure paths, with the real driver, against nothing listening. */
class MongoArchiveProbeTest {

    private final MongoArchiveProbe probe = new MongoArchiveProbe(Duration.ofMillis(300));

    @Test
    void nothingListeningIsUnreachableWithoutLeakingTheUri() throws IOException {
        ArchiveReport report = probe.probe(new ArchiveConnection("mongodb://app:s3cret@127.0.0.1:" + closedPort() + "/", null));
        assertThat(report).isInstanceOfSatisfying(ArchiveReport.Unusable.class, u -> {
            assertThat(u.reason()).isEqualTo("Unreachable");
            assertThat(u.message()).doesNotContain("s3cret");
        });
    }

    /** Unknown is not "empty": the starting mode then takes the safe side (StartingMode). */
    @Test
    void anArchiveThatCannotBeAskedWhetherItHoldsDataAnswersNothing() throws IOException {
        assertThat(probe.holdingData(new ArchiveConnection("mongodb://127.0.0.1:" + closedPort() + "/", null), List.of("shop.orders")))
                .isEmpty();
        assertThat(probe.holdingData(new ArchiveConnection("mongodb://host:notaport/", null), List.of("shop.orders"))).isEmpty();
    }

    @Test
    void malformedConnectionStringIsInvalidUri() {
        ArchiveReport report = probe.probe(new ArchiveConnection("mongodb://host:notaport/", null));
        assertThat(report).isInstanceOfSatisfying(ArchiveReport.Unusable.class,
                u -> assertThat(u.reason()).isEqualTo("InvalidUri"));
    }

    @Test
    void caBundleWithoutCertificatesIsRejectedClearly() throws IOException {
        ArchiveReport report = probe.probe(new ArchiveConnection("mongodb://127.0.0.1:" + closedPort() + "/", "not a pem"));
        assertThat(report).isInstanceOfSatisfying(ArchiveReport.Unusable.class, u -> {
            assertThat(u.reason()).isEqualTo("InvalidCa");
            assertThat(u.message()).contains("PEM");
        });
    }

    @Test
    void connectionToStringHidesTheUri() {
        assertThat(new ArchiveConnection("mongodb://app:s3cret@h/", null).toString()).doesNotContain("s3cret");
    }

    static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
