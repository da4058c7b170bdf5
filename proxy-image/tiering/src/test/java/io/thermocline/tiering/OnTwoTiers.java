package io.thermocline.tiering;

import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A test on {@link TwoTiers} of its own: started before each test method (a {@code @BeforeEach},
 * so under the tests' timeout) and closed after it, once the test class's own {@code @AfterEach}
 * methods have stopped what they started on the tiers.
 */
public abstract class OnTwoTiers {

    private final Supplier<TwoTiers> start;

    /** This test's tiers. */
    protected TwoTiers tiers;

    protected OnTwoTiers() {
        this(TwoTiers::new);
    }

    /** Tiers started otherwise, e.g. {@code TwoTiers.withFastOplogOf(100)}. */
    protected OnTwoTiers(Supplier<TwoTiers> start) {
        this.start = start;
    }

    @BeforeEach
    protected final void startTiers() {
        tiers = start.get();
    }

    @AfterEach
    protected final void closeTiers() {
        if (tiers != null) {
            tiers.close();
        }
    }
}
