package io.thermocline.proxy.routing;

import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Classifies the commands that change a collection's definition or name ({@code create}, {@code drop}, the index
 * commands, {@code collMod}, {@code reIndex}, {@code renameCollection}, {@code dropDatabase}, {@code convertToCapped},
 * {@code cloneCollectionAsCapped}): DDL on a tiered namespace goes to both tiers, or is refused with the reason when
 * the tiers and the feeder cannot apply it as one step. Part of {@link CommandClassifier}, which calls it.
 */
final class DdlClassifier {

    private DdlClassifier() {}

    static CommandClass collectionDdl(String name, BsonValue collection, String db, RoutingTable table) {
        String ns = CommandClassifier.namespace(db, collection);
        if (ns == null) {
            return new CommandClass.PassThrough(name, Reason.MALFORMED_COMMAND);
        }
        return table.tiered(ns)
                ? new CommandClass.Ddl(name, List.of(ns))
                : new CommandClass.PassThrough(name, Reason.UNTIERED_NAMESPACE);
    }

    static CommandClass rename(BsonDocument command, String sent, RoutingTable table) {
        String from = CommandClassifier.stringOrNull(command.get(sent));
        String to = CommandClassifier.stringOrNull(command.get("to"));
        if (from == null || to == null) {
            return new CommandClass.PassThrough("renameCollection", Reason.MALFORMED_COMMAND);
        }
        for (String ns : List.of(from, to)) {
            if (table.tiered(ns)) {
                return new CommandClass.Rejected(
                        "renameCollection",
                        Reason.RENAME_OF_TIERED_NAMESPACE,
                        "renameCollection " + from + " -> " + to + " involves tiered namespace " + ns
                                + "; the two tiers and the "
                                + "feeder cannot rename as one step. Remove the collection's tiering policy (and let the proxy pick up "
                                + "the change) before renaming it, then add a policy for the new name");
            }
        }
        return new CommandClass.PassThrough("renameCollection", Reason.UNTIERED_NAMESPACE);
    }

    static CommandClass dropDatabase(String db, RoutingTable table) {
        List<String> tiered = table.policies().keySet().stream()
                .filter(ns -> ns.startsWith(db + "."))
                .sorted()
                .toList();
        return tiered.isEmpty()
                ? new CommandClass.PassThrough("dropDatabase", Reason.UNTIERED_NAMESPACE)
                : new CommandClass.Ddl("dropDatabase", tiered);
    }

    static CommandClass convertToCapped(BsonValue collection, String db, RoutingTable table) {
        String ns = CommandClassifier.namespace(db, collection);
        if (ns != null && table.tiered(ns)) {
            return new CommandClass.Rejected(
                    "convertToCapped",
                    Reason.DDL_ON_TIERED_NAMESPACE,
                    "convertToCapped on tiered namespace " + ns
                            + ": a capped collection cannot have documents evicted, so it "
                            + "cannot be tiered; remove its tiering policy first");
        }
        return new CommandClass.PassThrough(
                "convertToCapped", ns == null ? Reason.MALFORMED_COMMAND : Reason.UNTIERED_NAMESPACE);
    }

    static CommandClass cloneAsCapped(BsonDocument command, String db, RoutingTable table) {
        String target = CommandClassifier.namespace(db, command.get("toCollection"));
        if (target != null && table.tiered(target)) {
            return new CommandClass.Rejected(
                    "cloneCollectionAsCapped",
                    Reason.DDL_ON_TIERED_NAMESPACE,
                    "cloneCollectionAsCapped into tiered namespace " + target
                            + ": a capped collection cannot be tiered; "
                            + "clone into a namespace without a tiering policy");
        }
        // The archive holds every document of a tiered source (after the sync barrier), so it can clone it.
        return new CommandClass.PassThrough(
                "cloneCollectionAsCapped", target == null ? Reason.MALFORMED_COMMAND : Reason.UNTIERED_NAMESPACE);
    }
}
