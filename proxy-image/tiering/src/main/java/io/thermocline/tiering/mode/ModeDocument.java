package io.thermocline.tiering.mode;

import io.thermocline.config.Mode;
import java.time.Instant;
import java.util.Objects;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * The fleet's one mode document ({@code thermocline.state}, {@code _id: "mode"}; MODES contract). Besides the
 * contract's fields it keeps what the protocol needs: {@code cutoverAt}, the archive time the archive
 * follower must have applied before writes go to the fast tier, {@code followFrom}, where the follower
 * starts after a drain, and {@code configRequest}, the last mode a config file asked for (so a restart
 * does not undo a request made since by the CLI or the operator).
 */
public record ModeDocument(Mode requested, boolean override, String requestedBy, Instant requestedAt,
                           Mode active, Phase phase, String refusal, Instant since, long epoch, long version,
                           DrainProgress drain, BsonTimestamp cutoverAt, BsonTimestamp followFrom, Mode configRequest) {

    public static final String ID = "mode";

    public ModeDocument {
        Objects.requireNonNull(requested, "requested");
        Objects.requireNonNull(active, "active");
        Objects.requireNonNull(phase, "phase");
    }

    /** A cluster created before modes existed (no document): tiered, version 0. */
    public static ModeDocument initial() {
        return new ModeDocument(Mode.TIERED, false, "config", Instant.EPOCH, Mode.TIERED, Phase.TIERED, null,
                Instant.EPOCH, 0, 0, null, null, null, null);
    }

    public boolean exists() {
        return version > 0;
    }

    public ModeDocument requesting(Mode mode, boolean withOverride, String by, Instant at) {
        return new ModeDocument(mode, withOverride, by, at, active, phase, refusal, since, epoch, version, drain,
                cutoverAt, followFrom, "config".equals(by) ? mode : configRequest);
    }

    /** A new phase: the epoch bumps, so every proxy acknowledges it before the controller goes on. */
    public ModeDocument entering(Mode newActive, Phase newPhase, Instant at) {
        return new ModeDocument(requested, override, requestedBy, requestedAt, newActive, newPhase, null, at, epoch + 1,
                version, drain, newPhase == Phase.CUTTING_OVER ? null : cutoverAt, followFrom, configRequest);
    }

    public ModeDocument withRefusal(String sentence) {
        return new ModeDocument(requested, override, requestedBy, requestedAt, active, phase, sentence, since, epoch,
                version, drain, cutoverAt, followFrom, configRequest);
    }

    public ModeDocument withDrain(DrainProgress progress) {
        return new ModeDocument(requested, override, requestedBy, requestedAt, active, phase, refusal, since, epoch,
                version, progress, cutoverAt, followFrom, configRequest);
    }

    public ModeDocument withCutoverAt(BsonTimestamp time) {
        return new ModeDocument(requested, override, requestedBy, requestedAt, active, phase, refusal, since, epoch,
                version, drain, time, followFrom, configRequest);
    }

    public ModeDocument withFollowFrom(BsonTimestamp time) {
        return new ModeDocument(requested, override, requestedBy, requestedAt, active, phase, refusal, since, epoch,
                version, drain, cutoverAt, time, configRequest);
    }

    ModeDocument withVersion(long newVersion) {
        return new ModeDocument(requested, override, requestedBy, requestedAt, active, phase, refusal, since, epoch,
                newVersion, drain, cutoverAt, followFrom, configRequest);
    }

    public BsonDocument toBson() {
        BsonDocument d = new BsonDocument("_id", new BsonString(ID))
                .append("requested", new BsonString(requested.configName()))
                .append("override", BsonBoolean.valueOf(override))
                .append("requestedBy", new BsonString(requestedBy))
                .append("requestedAt", date(requestedAt))
                .append("active", new BsonString(active.configName()))
                .append("phase", new BsonString(phase.documentName()))
                .append("refusal", refusal == null ? BsonNull.VALUE : new BsonString(refusal))
                .append("since", date(since))
                .append("epoch", new BsonInt64(epoch))
                .append("version", new BsonInt64(version))
                .append("cutoverAt", cutoverAt == null ? BsonNull.VALUE : cutoverAt)
                .append("followFrom", followFrom == null ? BsonNull.VALUE : followFrom)
                .append("configRequest", configRequest == null ? BsonNull.VALUE : new BsonString(configRequest.configName()));
        if (drain != null) {
            d.append("drain", new BsonDocument("feederLagSeconds", new BsonDouble(drain.feederLagSeconds()))
                    .append("unmirroredEvents", new BsonInt64(drain.unmirroredEvents()))
                    .append("startedAt", date(drain.startedAt()))
                    .append("drainedAt", date(drain.drainedAt())));
        }
        return d;
    }

    public static ModeDocument fromBson(BsonDocument d) {
        DrainProgress drain = null;
        if (d.isDocument("drain")) {
            BsonDocument p = d.getDocument("drain");
            drain = new DrainProgress(number(p.get("feederLagSeconds")), (long) number(p.get("unmirroredEvents")),
                    instant(p.get("startedAt")), instant(p.get("drainedAt")));
        }
        return new ModeDocument(Mode.parse(d.getString("requested").getValue()),
                d.getBoolean("override", BsonBoolean.FALSE).getValue(),
                d.getString("requestedBy", new BsonString("config")).getValue(), instant(d.get("requestedAt")),
                d.isString("active") ? Mode.parse(d.getString("active").getValue()) : Mode.TIERED,
                d.isString("phase") ? Phase.parse(d.getString("phase").getValue()) : Phase.TIERED,
                d.isString("refusal") ? d.getString("refusal").getValue() : null, instant(d.get("since")),
                (long) number(d.get("epoch")), (long) number(d.get("version")), drain,
                d.isTimestamp("cutoverAt") ? d.getTimestamp("cutoverAt") : null,
                d.isTimestamp("followFrom") ? d.getTimestamp("followFrom") : null,
                d.isString("configRequest") ? Mode.parse(d.getString("configRequest").getValue()) : null);
    }

    static BsonValue date(Instant instant) {
        return instant == null ? BsonNull.VALUE : new BsonDateTime(instant.toEpochMilli());
    }

    static Instant instant(BsonValue value) {
        return value != null && value.isDateTime() ? Instant.ofEpochMilli(value.asDateTime().getValue()) : null;
    }

    private static double number(BsonValue value) {
        return value != null && value.isNumber() ? value.asNumber().doubleValue() : 0;
    }
}
