package io.thermocline.tiering.mode;

import io.thermocline.config.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.bson.BsonTimestamp;

/**
 * The mode controller's one decision, pure: from the mode document and what the controller observed,
 * the next document (empty: nothing to change). Observations are taken in this order, and the
 * protocol depends on it: the fleet's acknowledgements of the current epoch first, then the feeder's
 * barrier and the archive's time, so both are later than the last write any replica started under
 * the previous phase.
 */
public final class Transition {

    /**
     * What the controller saw. {@code fleetAcked}: every live proxy acts on the document's epoch and
     * finished the requests it began under earlier ones. {@code feederDrained}: after that, the feeder
     * mirrored every fast-tier write. {@code archiveNow}: the archive's time, read after both.
     * {@code followerThrough}: what the archive follower has applied. {@code gateRefusal}: why the
     * shadow evidence does not allow a cutover yet, if it does not.
     */
    public record Facts(boolean fleetAcked, boolean feederDrained, double feederLagSeconds, long unmirroredEvents,
                        BsonTimestamp archiveNow, BsonTimestamp followerThrough, Optional<String> gateRefusal,
                        Instant now) {
    }

    /**
     * How long {@code CuttingOver} waits for the archive follower to apply the archive through the cutover point;
     * writes on tiered collections are refused meanwhile, so after this the fleet goes back to shadowing (the
     * archive answers again) with the reason as the refusal, and the gate lets a cutover start again only with the
     * follower in step ({@link CutoverGate#follower}).
     */
    public static final Duration CUTOVER_FOLLOWER_WAIT = Duration.ofSeconds(60);

    static final String SHADOW_THROUGH_DRAINING = "shadow is reached through draining from tiered: the fleet drains first"
            + " (writes refused briefly while the feeder catches up), then shadows";

    private Transition() {
    }

    public static Optional<ModeDocument> next(ModeDocument d, Facts f) {
        Mode want = d.requested();
        return switch (d.phase()) {
            case SHADOWING -> switch (want) {
                case SHADOW -> clearRefusal(d);
                case DRAINING -> Optional.of(d.entering(Mode.DRAINING, Phase.DRAINED, f.now()));
                case TIERED -> {
                    Optional<String> refusal = d.override() ? Optional.empty() : f.gateRefusal();
                    yield refusal.isPresent() ? refuse(d, refusal.get()) : Optional.of(d.entering(d.active(), Phase.CUTTING_OVER, f.now()));
                }
            };
            case CUTTING_OVER -> {
                if (want != Mode.TIERED) {
                    // changed their mind: back to the archive-authoritative phase the cutover started from
                    yield Optional.of(want == Mode.SHADOW
                            ? d.entering(Mode.SHADOW, Phase.SHADOWING, f.now())
                            : d.entering(Mode.DRAINING, Phase.DRAINED, f.now()));
                }
                if (d.cutoverAt() == null) {
                    yield f.fleetAcked() && f.archiveNow() != null ? Optional.of(d.withCutoverAt(f.archiveNow())) : Optional.empty();
                }
                boolean followed = f.followerThrough() != null && f.followerThrough().compareTo(d.cutoverAt()) >= 0;
                if (!followed && f.now().isAfter(d.since().plus(CUTOVER_FOLLOWER_WAIT))) {
                    ModeDocument back = d.active() == Mode.DRAINING ? d.entering(Mode.DRAINING, Phase.DRAINED, f.now())
                            : d.entering(Mode.SHADOW, Phase.SHADOWING, f.now());
                    yield Optional.of(back.withRefusal("the archive follower did not"
                            + " apply the archive through the cutover point within " + CUTOVER_FOLLOWER_WAIT.toSeconds() + " s (applied through "
                            + f.followerThrough() + ", cutover point " + d.cutoverAt() + "): back to " + back.phase().documentName()
                            + ", writes go to the archive again; the cutover starts again once the follower is in step"));
                }
                yield followed ? Optional.of(d.entering(Mode.TIERED, Phase.TIERED, f.now())) : Optional.empty();
            }
            case TIERED -> switch (want) {
                case TIERED -> clearRefusal(d);
                case DRAINING, SHADOW -> Optional.of(d.entering(Mode.DRAINING, Phase.DRAINING, f.now())
                        .withDrain(DrainProgress.started(f.now()))
                        .withRefusal(want == Mode.SHADOW ? SHADOW_THROUGH_DRAINING : null));
            };
            case DRAINING -> {
                if (want == Mode.TIERED) {
                    yield Optional.of(d.entering(Mode.TIERED, Phase.TIERED, f.now()).withDrain(null));
                }
                DrainProgress progress = d.drain() == null ? DrainProgress.started(f.now()) : d.drain();
                if (f.fleetAcked() && f.feederDrained() && f.archiveNow() != null) {
                    ModeDocument drained = d.entering(Mode.DRAINING, Phase.DRAINED, f.now())
                            .withDrain(progress.drained(f.now())).withFollowFrom(f.archiveNow());
                    yield Optional.of(want == Mode.SHADOW ? drained.withRefusal(SHADOW_THROUGH_DRAINING) : drained);
                }
                DrainProgress seen = progress.withLag(f.feederLagSeconds(), f.unmirroredEvents());
                yield seen.equals(d.drain()) ? Optional.empty() : Optional.of(d.withDrain(seen));
            }
            // only thermocline restore-sync leaves it (to Drained, once the fast tier is reset): no request may
            // reopen the tiers while the archive is being replaced
            case RESTORING -> Optional.empty();
            case DRAINED -> switch (want) {
                case DRAINING -> Optional.empty();
                case SHADOW -> Optional.of(d.entering(Mode.SHADOW, Phase.SHADOWING, f.now()));
                case TIERED -> {
                    // no shadow evidence to wait for on the way back, but the follower must be able to finish the cutover
                    Optional<String> refusal = d.override() ? Optional.empty() : f.gateRefusal();
                    yield refusal.isPresent() ? refuse(d, refusal.get()) : Optional.of(d.entering(Mode.DRAINING, Phase.CUTTING_OVER, f.now()));
                }
            };
        };
    }

    private static Optional<ModeDocument> clearRefusal(ModeDocument d) {
        return d.refusal() == null ? Optional.empty() : Optional.of(d.withRefusal(null));
    }

    private static Optional<ModeDocument> refuse(ModeDocument d, String sentence) {
        return sentence.equals(d.refusal()) ? Optional.empty() : Optional.of(d.withRefusal(sentence));
    }
}
