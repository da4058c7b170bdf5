package io.thermocline.operator.fakes;

import io.quarkus.test.Mock;
import io.thermocline.operator.tiering.TieringObserver;
import io.thermocline.operator.tiering.TieringSnapshot;
import io.thermocline.operator.tiering.TieringTarget;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/** Tiering progress as tests set it. */
@Mock
@ApplicationScoped
public class FakeTiering implements TieringObserver {

    private final AtomicReference<TieringSnapshot> snapshot = new AtomicReference<>();

    public FakeTiering() {
        reset();
    }

    public void reset() {
        snapshot.set(new TieringSnapshot(2L, true, 1_000L, 50_000L));
    }

    public void report(TieringSnapshot next) {
        snapshot.set(next);
    }

    @Override
    public Optional<TieringSnapshot> observe(TieringTarget target) {
        return Optional.ofNullable(snapshot.get());
    }
}
