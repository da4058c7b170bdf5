package io.thermocline.security.roles;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

import java.util.LinkedHashSet;
import java.util.Set;

/** One privilege document: {@code {resource: {...}, actions: [...]}}, as createRole takes and rolesInfo returns. */
public record Privilege(ResourcePattern resource, Set<String> actions) {
    public Privilege {
        actions = Set.copyOf(actions);
    }

    public static Privilege fromDocument(BsonDocument d) {
        BsonValue resource = d.get("resource");
        BsonValue actions = d.get("actions");
        if (resource == null || !resource.isDocument() || actions == null || !actions.isArray()) {
            throw new IllegalArgumentException("a privilege is {resource: {...}, actions: [...]}, not " + d.toJson());
        }
        Set<String> names = new LinkedHashSet<>();
        for (BsonValue a : actions.asArray()) {
            if (!a.isString()) {
                throw new IllegalArgumentException("privilege actions are strings, not " + a);
            }
            names.add(a.asString().getValue());
        }
        return new Privilege(ResourcePattern.fromDocument(resource.asDocument()), names);
    }

    public BsonDocument toDocument() {
        BsonArray a = new BsonArray();
        actions.stream().sorted().forEach(x -> a.add(new BsonString(x)));
        return new BsonDocument("resource", resource.toDocument()).append("actions", a);
    }

    public boolean allows(Target target, String action) {
        return actions.contains(action) && resource.matches(target);
    }
}
