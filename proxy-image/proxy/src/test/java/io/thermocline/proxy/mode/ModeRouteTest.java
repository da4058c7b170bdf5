package io.thermocline.proxy.mode;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.tiering.mode.Phase;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ModeRouteTest {

    static final CommandClass READ = new CommandClass.Read("find", "shop.orders", new BsonDocument(), null);
    static final CommandClass AGGREGATE = new CommandClass.Aggregate("shop", "orders", new BsonArray());
    static final CommandClass DDL = new CommandClass.Ddl("createIndexes", List.of("shop.orders"));
    static final CommandClass EXPLAIN = new CommandClass.Explain(READ, new BsonDocument(), "queryPlanner");

    @Test
    void restoringRefusesEveryCommandOnATieredNamespaceWhileTheArchiveIsReplaced() {
        for (CommandClass cls : List.of(READ, AGGREGATE, DDL, EXPLAIN)) {
            assertThat(ModeRoute.of(Phase.RESTORING, false, false, cls, false, "find"))
                    .as("%s", cls)
                    .isEqualTo(ModeRoute.REFUSE);
            assertThat(ModeRoute.of(Phase.RESTORING, false, false, cls, true, "find"))
                    .as("%s in a transaction", cls)
                    .isEqualTo(ModeRoute.REFUSE);
        }
    }

    @Test
    void cursorsStopOnlyWhileTheFleetIsHeldOrTheModeIsUnknown() {
        for (Phase phase : Phase.values()) {
            assertThat(ModeRoute.cursorContinues(phase, false)).as("%s", phase).isEqualTo(phase != Phase.RESTORING);
            assertThat(ModeRoute.cursorContinues(phase, true))
                    .as("%s, stale", phase)
                    .isFalse();
        }
    }

    @Test
    void theOtherPhasesRouteReadsAsBefore() {
        assertThat(ModeRoute.of(Phase.DRAINED, false, false, READ, false, "find"))
                .isEqualTo(ModeRoute.ARCHIVE);
        assertThat(ModeRoute.of(Phase.TIERED, false, false, READ, false, "find"))
                .isEqualTo(ModeRoute.TIERED);
        assertThat(ModeRoute.of(Phase.DRAINING, false, false, READ, false, "find"))
                .isEqualTo(ModeRoute.TIERED);
        assertThat(ModeRoute.of(Phase.DRAINED, false, false, DDL, false, "createIndexes"))
                .isEqualTo(ModeRoute.TIERED);
        assertThat(ModeRoute.of(Phase.DRAINING, false, false, DDL, false, "createIndexes"))
                .isEqualTo(ModeRoute.REFUSE);
    }
}
