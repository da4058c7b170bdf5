package io.thermocline.config;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Turns Jackson's binding errors into sentences a person can act on: the value that was given, what
 * the field takes (in words, never a Java type), and for an unknown field the nearest known name.
 */
final class ConfigProblems {

    private ConfigProblems() {
    }

    static String describe(JsonMappingException e, JsonNode tree) {
        if (e instanceof UnrecognizedPropertyException unknown) {
            List<String> known = unknown.getKnownPropertyIds().stream().map(Object::toString).sorted().toList();
            return "no such field" + nearest(unknown.getPropertyName(), known).map(n -> "; did you mean " + n + "?").orElse("")
                    + " Fields here: " + String.join(", ", known);
        }
        if (e instanceof ValueInstantiationException && e.getCause() instanceof IllegalArgumentException cause) {
            return cause.getMessage(); // the enums and records word their own refusals
        }
        if (e instanceof InvalidFormatException format && format.getTargetType() == Duration.class) {
            return format.getOriginalMessage();
        }
        if (e instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null) {
            JsonNode given = at(tree, e.getPath());
            return (given == null ? "this value" : shown(given)) + " is not " + kind(mismatch.getTargetType());
        }
        // unforeseen: keep Jackson's words but not its Java type names
        return String.valueOf(e.getOriginalMessage()).replaceAll("`[\\w.$]+`", "this field's type");
    }

    /** Swaps the offending field for its default (or drops it) so that binding can go on to the next problem. */
    static boolean replaceWithDefault(ObjectNode tree, ObjectNode defaults, List<JsonMappingException.Reference> path) {
        if (path.isEmpty()) {
            return false;
        }
        JsonNode parent = at(tree, path.subList(0, path.size() - 1));
        JsonMappingException.Reference leaf = path.get(path.size() - 1);
        JsonNode fallback = at(defaults, path);
        if (parent instanceof ObjectNode object && leaf.getFieldName() != null && object.has(leaf.getFieldName())) {
            if (fallback != null && !(object.get(leaf.getFieldName()) instanceof ObjectNode)) {
                object.set(leaf.getFieldName(), fallback.deepCopy());
            } else {
                object.remove(leaf.getFieldName());
            }
            return true;
        }
        if (parent instanceof ArrayNode array && leaf.getIndex() >= 0 && leaf.getIndex() < array.size()) {
            array.remove(leaf.getIndex());
            return true;
        }
        return false;
    }

    /** The known name within a small edit distance of the unknown one, if any. */
    static Optional<String> nearest(String unknown, Collection<String> known) {
        int limit = Math.max(2, unknown.length() / 3);
        return known.stream()
                .map(k -> Map.entry(k, distance(unknown.toLowerCase(), k.toLowerCase())))
                .filter(d -> d.getValue() <= limit)
                .min(Comparator.comparingInt(Map.Entry::getValue))
                .map(Map.Entry::getKey);
    }

    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    private static JsonNode at(JsonNode root, List<JsonMappingException.Reference> path) {
        JsonNode node = root;
        for (JsonMappingException.Reference ref : path) {
            if (node == null) {
                return null;
            }
            node = ref.getFieldName() != null ? node.get(ref.getFieldName()) : node.get(ref.getIndex());
        }
        return node;
    }

    private static String shown(JsonNode given) {
        if (given.isArray()) {
            return "a list";
        }
        if (given.isObject()) {
            return "a mapping";
        }
        if (given.isTextual()) {
            return "'" + given.asText() + "'";
        }
        return given.toString();
    }

    private static String kind(Class<?> type) {
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class || type == short.class) {
            return "a whole number";
        }
        if (type == double.class || type == Double.class || type == float.class) {
            return "a number";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a string";
        }
        if (Collection.class.isAssignableFrom(type)) {
            return "a list";
        }
        if (type == Duration.class) {
            return "a duration (e.g. 30d, 12h, 90m, 5s or 100ms)";
        }
        if (type.isEnum()) {
            return "one of the documented values";
        }
        return "a mapping";
    }
}
