package io.thermocline.proxy.routing;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.AgeValue;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Instant;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Routes write statements on one namespace. The rule: a write may run on the fast tier alone only
 * when every document it can match or create is provably held there, or has been made so by promotion;
 * otherwise it is resolved through the archive or applied to both tiers.
 */
public final class WriteRouter {

    private WriteRouter() {
    }

    /** One document of an {@code insert} command. */
    public static WriteRoute insert(BsonDocument document, CollectionPolicy policy, CoverageBound bound) {
        if (policy == null) {
            return new WriteRoute.Archive(Reason.UNTIERED_NAMESPACE);
        }
        BsonValue id = document == null ? null : document.get("_id");
        if (id == null) {
            return new WriteRoute.FastTier(Reason.INSERT_SERVER_ASSIGNS_ID);
        }
        // Under an _id policy a covered _id would already be in the fast tier if it existed anywhere,
        // so the fast tier's own unique index gives the right duplicate-key answer.
        if (policy.agedByObjectId() && AgeValue.of(policy, id).filter(AgeValue::orderMatchesTime)
                .map(a -> coverage(bound).covers(a.instant())).orElse(false)) {
            return new WriteRoute.FastTier(Reason.INSERT_ID_PROVABLY_HOT);
        }
        return new WriteRoute.PointWrite(id, Reason.INSERT_ID_MAY_BE_ARCHIVED);
    }

    /** One statement of an {@code update} command: {@code {q, u, upsert, multi, sort, collation}}. */
    public static WriteRoute update(BsonDocument statement, CollectionPolicy policy, CoverageBound bound) {
        if (policy == null) {
            return new WriteRoute.Archive(Reason.UNTIERED_NAMESPACE);
        }
        BsonDocument q = documentOrEmpty(statement.get("q"));
        boolean upsert = flag(statement, "upsert");
        boolean multi = flag(statement, "multi");
        return route(q, documentOrEmpty(statement.get("sort")), multi, upsert, createdId(statement.get("u")),
                documentOrNull(statement.get("collation")), policy, bound);
    }

    /** One statement of a {@code delete} command: {@code {q, limit, collation}} ({@code limit: 0} = all). */
    public static WriteRoute delete(BsonDocument statement, CollectionPolicy policy, CoverageBound bound) {
        if (policy == null) {
            return new WriteRoute.Archive(Reason.UNTIERED_NAMESPACE);
        }
        BsonValue limit = statement.get("limit");
        boolean multi = limit == null || !limit.isNumber() || limit.asNumber().longValue() != 1;
        return route(documentOrEmpty(statement.get("q")), new BsonDocument(), multi, false, Optional.empty(),
                documentOrNull(statement.get("collation")), policy, bound);
    }

    /** A whole {@code findAndModify} command: {@code query}, {@code sort}, {@code update}/{@code remove}, {@code upsert}. */
    public static WriteRoute findAndModify(BsonDocument command, CollectionPolicy policy, CoverageBound bound) {
        if (policy == null) {
            return new WriteRoute.Archive(Reason.UNTIERED_NAMESPACE);
        }
        boolean upsert = flag(command, "upsert") && !flag(command, "remove");
        return route(documentOrEmpty(command.get("query")), documentOrEmpty(command.get("sort")), false, upsert,
                upsert ? createdId(command.get("update")) : Optional.empty(), documentOrNull(command.get("collation")), policy, bound);
    }

    private static WriteRoute route(BsonDocument q, BsonDocument sort, boolean multi, boolean upsert, Optional<BsonValue> createdId,
                                    BsonDocument collation, CollectionPolicy policy, CoverageBound bound) {
        Optional<BsonValue> idEquality = AgeProof.idEquality(q);
        // Under a non-simple collation a string _id equality may match several documents: not a point write,
        // but still the _id an upsert would give the document it creates.
        Optional<BsonValue> pinnedId = idEquality.filter(id -> Collations.pinsOneValue(id, collation));
        Optional<BsonValue> newId = idEquality.isPresent() ? idEquality : createdId;
        Optional<Instant> proven = AgeProof.lowerBound(q, policy);
        boolean hot = proven.isPresent() && coverage(bound).covers(proven.get());
        if (upsert && pinnedId.isPresent()) {
            // The upsert may create this _id: an archived copy must be promoted first or we would duplicate it.
            return new WriteRoute.PointWrite(pinnedId.get(), Reason.UPSERT_WITH_EXPLICIT_ID);
        }
        if (hot) {
            return upsert && newId.isPresent()
                    ? new WriteRoute.PointWrite(newId.get(), Reason.UPSERT_WITH_EXPLICIT_ID)
                    : new WriteRoute.FastTier(Reason.PROVABLY_HOT_WRITE);
        }
        if (pinnedId.isPresent()) {
            return new WriteRoute.PointWrite(pinnedId.get(), Reason.POINT_WRITE_BY_ID);
        }
        if (!multi) {
            return new WriteRoute.ResolveOneThenPointWrite(q, sort, upsert, upsert ? newId : Optional.empty(), Reason.SINGLE_WRITE_NOT_PROVABLY_HOT);
        }
        return new WriteRoute.BothTiers(upsert, upsert ? newId : Optional.empty(), Reason.MULTI_WRITE_NOT_PROVABLY_HOT);
    }

    /**
     * The {@code _id} an upsert would give the document it creates, when the update names one: a
     * replacement's {@code _id}, or {@code $setOnInsert._id} / {@code $set._id}. Pipeline updates: unknown.
     */
    static Optional<BsonValue> createdId(BsonValue update) {
        if (update == null || !update.isDocument()) {
            return Optional.empty();
        }
        BsonDocument u = update.asDocument();
        if (!AgeProof.isOperatorDocument(u)) {
            return Optional.ofNullable(u.get("_id"));
        }
        for (String operator : new String[] {"$setOnInsert", "$set"}) {
            BsonValue fields = u.get(operator);
            if (fields != null && fields.isDocument() && fields.asDocument().containsKey("_id")) {
                return Optional.of(fields.asDocument().get("_id"));
            }
        }
        return Optional.empty();
    }

    private static CoverageBound coverage(CoverageBound bound) {
        return bound == null ? CoverageBound.nothing() : bound;
    }

    private static boolean flag(BsonDocument d, String key) {
        BsonValue v = d.get(key);
        return v != null && (v.isBoolean() ? v.asBoolean().getValue() : v.isNumber() && v.asNumber().intValue() != 0);
    }

    private static BsonDocument documentOrEmpty(BsonValue v) {
        return v != null && v.isDocument() ? v.asDocument() : new BsonDocument();
    }

    private static BsonDocument documentOrNull(BsonValue v) {
        return v != null && v.isDocument() ? v.asDocument() : null;
    }
}
