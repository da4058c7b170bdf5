package io.thermocline.operator.fakes;

import io.thermocline.operator.mode.FollowerDocument;
import io.thermocline.operator.mode.ModeDocument;
import io.thermocline.operator.mode.ModeRequest;
import io.thermocline.operator.mode.ModeStore;
import io.thermocline.operator.mode.ModeStore.ModeReading;
import io.thermocline.operator.mode.ShadowEvidence;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.bson.BsonTimestamp;
import org.bson.Document;

/**
 * One fast tier's {@code thermocline.state} {@code _id: "mode"} and {@code thermocline.shadow} documents,
 * with the data plane's mode controller as MODES.md describes it: requests are written under a
 * compare-and-set on {@code version}; between two reads the controller takes at most one step
 * (shadow to tiered goes through CuttingOver, unless refused; draining goes through Draining to Drained
 * once the feeder has caught up), bumping {@code epoch} and {@code since} on every transition.
 */
public final class ModeController {

    private Document mode;
    private final List<Document> shadow = new ArrayList<>();
    private final List<Document> requests = new ArrayList<>();
    private boolean reachable = true;
    private String cutoverRefusal;
    private boolean drainHeld;
    private int conflicts;
    private Document follower;
    private BsonTimestamp archiveLatest;
    private long reads;

    // ---- what the data plane and the network do, as a test sets it

    /** Reads and writes fail (a fast tier that cannot be reached). */
    public synchronized void reachable(boolean value) {
        reachable = value;
    }

    /** The cutover gate refuses shadow to tiered (without override) with this sentence; null: the evidence is in. */
    public synchronized void refuseCutover(String refusal) {
        cutoverRefusal = refusal;
    }

    /** While held, a drain stays in Draining (the feeder has not caught up). */
    public synchronized void holdDrain(boolean held) {
        drainHeld = held;
    }

    /** The next {@code count} request writes lose the compare-and-set to someone else's write. */
    public synchronized void conflictNext(int count) {
        conflicts = count;
    }

    /** One proxy instance's evidence for one namespace, as the proxy writes it. */
    public synchronized void shadowEvidence(
            String instance,
            String namespace,
            long reads,
            long wouldServe,
            long compared,
            long diverged,
            Instant lastDivergenceAt) {
        shadow.removeIf(d -> d.getString("_id").equals(instance + "|" + namespace));
        shadow.add(new Document("_id", instance + "|" + namespace)
                .append("instance", instance)
                .append("namespace", namespace)
                .append("reads", reads)
                .append("wouldServe", wouldServe)
                .append("compared", compared)
                .append("agreed", compared - diverged)
                .append("diverged", diverged)
                .append("lastComparedAt", new Date())
                .append("lastDivergenceAt", lastDivergenceAt == null ? null : Date.from(lastDivergenceAt))
                .append("samples", List.of())
                .append("updatedAt", new Date()));
    }

    /** The archive follower's document ({@code _id: "archiveFollower"}) as the data plane writes it; null: none. */
    public synchronized void follower(Document document) {
        follower = document == null ? null : new Document(document);
    }

    /** A mode document the data plane's CLI or config wrote before (a fast tier kept from an earlier resource), settled. */
    public synchronized void requestedBefore(String requested, String by) {
        mode = new Document("_id", ModeDocument.ID)
                .append("requested", requested)
                .append("override", false)
                .append("requestedBy", by)
                .append("requestedAt", new Date())
                .append("active", requested)
                .append("phase", ModeDocument.settledPhase(requested))
                .append("since", new Date())
                .append("epoch", 1L)
                .append("version", 1L);
    }

    /** The archive's latest optime as a ping's operationTime gives it; null: the archive cannot be asked. */
    public synchronized void archiveLatest(BsonTimestamp time) {
        archiveLatest = time;
    }

    /** What {@code thermocline restore-sync --hold} writes: draining requested by restore-sync, phase Restoring. */
    public synchronized void heldForRestore() {
        restoreSync("draining", "Restoring");
    }

    /** What {@code thermocline restore-sync} writes after the archive's restore: phase Drained, the archive answering. */
    public synchronized void resyncedAfterRestore() {
        restoreSync("draining", ModeDocument.PHASE_DRAINED);
    }

    private void restoreSync(String requested, String phase) {
        if (mode == null) {
            mode = new Document("_id", ModeDocument.ID).append("epoch", 0L).append("version", 0L);
        }
        mode.append("requested", requested)
                .append("override", false)
                .append("requestedBy", "restore-sync")
                .append("requestedAt", new Date());
        transition(requested, phase);
    }

    /** The mode document as stored (null when missing). */
    public synchronized Document document() {
        return mode == null ? null : new Document(mode);
    }

    /** Every request written, oldest first: {@code requested}, {@code override}, {@code requestedBy}. */
    public synchronized List<Document> requests() {
        return List.copyOf(requests);
    }

    /** How often the operator read the mode document: each deletion pass reads it once, first, so it counts passes. */
    public synchronized long reads() {
        return reads;
    }

    // ---- what the operator sees

    synchronized Optional<ModeReading> read() {
        reads++;
        if (!reachable) {
            return Optional.empty();
        }
        step();
        return Optional.of(new ModeReading(
                ModeDocument.parse(document()),
                ShadowEvidence.sum(List.copyOf(shadow)),
                FollowerDocument.parse(follower),
                archiveLatest));
    }

    synchronized ModeStore.Written request(ModeRequest request, Long expectedVersion, Instant at) {
        if (!reachable) {
            return ModeStore.Written.UNREACHABLE;
        }
        Long version = mode == null ? null : mode.get("version", Long.class);
        if (conflicts > 0) {
            conflicts--;
            bump();
            return ModeStore.Written.CONFLICT;
        }
        if (!Objects.equals(version, expectedVersion)) {
            return ModeStore.Written.CONFLICT;
        }
        if (mode == null) {
            mode = new Document("_id", ModeDocument.ID);
        }
        mode.append("requested", request.mode().value())
                .append("override", request.override())
                .append("requestedBy", request.requestedBy())
                .append("requestedAt", Date.from(at))
                .append("version", version == null ? 1L : version + 1);
        requests.add(new Document("requested", request.mode().value())
                .append("override", request.override())
                .append("requestedBy", request.requestedBy()));
        return ModeStore.Written.WRITTEN;
    }

    /** The controller's one step towards the request (a missing {@code active} is tiered). */
    private void step() {
        if (mode == null || mode.getString("requested") == null) {
            return;
        }
        String requested = mode.getString("requested");
        String active = mode.get("active", "tiered");
        String phase = mode.get("phase", ModeDocument.PHASE_TIERED);
        if (phase.equals(ModeDocument.PHASE_RESTORING)) {
            return; // only restore-sync leaves it (Transition: no request may)
        }
        if (requested.equals(active)) {
            if (active.equals("draining") && phase.equals(ModeDocument.PHASE_DRAINING) && !drainHeld) {
                ((Document) mode.get("drain"))
                        .append("feederLagSeconds", 0.0)
                        .append("unmirroredEvents", 0L)
                        .append("drainedAt", new Date());
                transition(active, ModeDocument.PHASE_DRAINED);
            }
            return;
        }
        switch (requested) {
            case "tiered" -> {
                if (active.equals("shadow") && !mode.getBoolean("override", false) && cutoverRefusal != null) {
                    if (!cutoverRefusal.equals(mode.getString("refusal"))) {
                        mode.append("refusal", cutoverRefusal);
                        bump();
                    }
                } else if (active.equals("shadow") && !phase.equals(ModeDocument.PHASE_CUTTING_OVER)) {
                    transition(active, ModeDocument.PHASE_CUTTING_OVER);
                } else {
                    transition("tiered", ModeDocument.PHASE_TIERED);
                }
            }
            case "shadow" -> transition("shadow", ModeDocument.PHASE_SHADOWING);
            case "draining" -> {
                mode.append(
                        "drain",
                        new Document("feederLagSeconds", 4.5)
                                .append("unmirroredEvents", 12L)
                                .append("startedAt", new Date())
                                .append("drainedAt", null));
                transition("draining", ModeDocument.PHASE_DRAINING);
            }
            default -> mode.append("refusal", "unknown mode " + requested);
        }
    }

    private void transition(String active, String phase) {
        mode.append("active", active)
                .append("phase", phase)
                .append("refusal", null)
                .append("since", new Date())
                .append("epoch", mode.get("epoch", 0L) + 1);
        bump();
    }

    private void bump() {
        if (mode != null) {
            mode.append("version", mode.get("version", 0L) + 1);
        }
    }
}
