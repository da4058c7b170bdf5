package io.thermocline.operator.tiering;

import java.util.Optional;

/** Reads feeder progress and tier sizes; empty when the tiers cannot be read right now. Faked in tests. */
public interface TieringObserver {

    Optional<TieringSnapshot> observe(TieringTarget target);
}
