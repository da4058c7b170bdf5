package io.thermocline.operator.fakes;

import io.quarkus.test.Mock;
import io.thermocline.operator.mode.ModeRequest;
import io.thermocline.operator.mode.ModeStore;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** The fast tiers' mode documents in the Quarkus tests: one {@link ModeController} per fast tier, by its first host. */
@Mock
@ApplicationScoped
public class FakeModes implements ModeStore {

    private final Map<String, ModeController> controllers = new ConcurrentHashMap<>();

    public void reset() {
        controllers.clear();
    }

    /** The mode controller of {@code NAME-fast} in {@code namespace}, made on first use. */
    public ModeController controller(String namespace, String cluster) {
        return controllers.computeIfAbsent(cluster + "-fast." + namespace, k -> new ModeController());
    }

    @Override
    public Optional<ModeReading> read(String fastTierUri, String archiveUri) {
        return of(fastTierUri).read();
    }

    @Override
    public Written request(String fastTierUri, ModeRequest request, Long expectedVersion, Instant at) {
        return of(fastTierUri).request(request, expectedVersion, at);
    }

    /** mongodb://user:pw@NAME-fast-0.NAME-fast.NS.svc:27017,... */
    private ModeController of(String uri) {
        String firstHost = uri.substring(uri.indexOf('@') + 1).split("[,:/]")[0];
        String[] labels = firstHost.split("\\.");
        return controllers.computeIfAbsent(labels[1] + "." + labels[2], k -> new ModeController());
    }
}
