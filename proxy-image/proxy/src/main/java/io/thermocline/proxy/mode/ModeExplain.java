package io.thermocline.proxy.mode;

import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.RoutingExplanation;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.wire.OpMsg;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * {@code explain} outside the tiered phases: the archive's plan (the archive answers), which tier would
 * answer once tiered and why, and in shadow mode whether the last comparison of the same shape agreed.
 */
public final class ModeExplain {

    private ModeExplain() {
    }

    public static RawBsonDocument annotate(RawBsonDocument archiveReply, RoutingExplanation wouldBe, Phase phase,
                                           Optional<Boolean> lastAgreement) {
        BsonDocument out = new BsonDocument();
        BsonValue ok = archiveReply.get("ok");
        if (ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1) {
            archiveReply.forEach(out::append);
        } else {
            out.append("ok", new BsonDouble(1)).append("tierExplainError", archiveReply.get("errmsg", new BsonString("")));
        }
        BsonDocument thermocline = wouldBe.toBsonDocument();
        thermocline.put("served", new BsonString("archive"));
        thermocline.append("mode", new BsonDocument("phase", new BsonString(phase.documentName()))
                .append("tieredWouldServe", new BsonString(wouldBe.served().label()))
                .append("lastComparisonAgreed", lastAgreement.<BsonValue>map(BsonBoolean::valueOf).orElse(BsonNull.VALUE)));
        out.append("thermocline", thermocline);
        return OpMsg.raw(out);
    }

    /** A read's shape: the namespace, the command and the filter's structure without its values. */
    public static String shape(CommandClass cls) {
        CommandClass c = cls instanceof CommandClass.Explain e ? e.explained() : cls;
        if (c instanceof CommandClass.Read r) {
            return r.namespace() + "|" + r.commandName() + "|" + structure(r.filter());
        }
        if (c instanceof CommandClass.Aggregate a) {
            return a.database() + "." + a.collection() + "|aggregate|" + structure(new BsonDocument("p", a.pipeline()));
        }
        return c.getClass().getSimpleName();
    }

    private static String structure(BsonValue v) {
        if (v == null) {
            return "";
        }
        if (v.isDocument()) {
            StringBuilder b = new StringBuilder("{");
            v.asDocument().forEach((k, x) -> b.append(k).append(':').append(structure(x)).append(','));
            return b.append('}').toString();
        }
        if (v.isArray()) {
            StringBuilder b = new StringBuilder("[");
            for (BsonValue x : (BsonArray) v) {
                b.append(structure(x)).append(',');
            }
            return b.append(']').toString();
        }
        return "?";
    }
}
