package io.thermocline.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Loads the one config: defaults, then the file (YAML or JSON), then environment
 * overrides named {@code THERMOCLINE_<PATH>} (e.g. {@code THERMOCLINE_TIERS_ARCHIVE_URI}),
 * then validation. Every problem is reported at once, naming the field and the fix.
 */
public final class ConfigLoader {

    static final String ENV_PREFIX = "THERMOCLINE_";
    private static final Set<String> SECTIONS = Set.of(
            "PROXY", "TIERS", "FLEET", "COLLECTIONS", "FEEDER", "EVICTOR", "WARMER", "AUTH", "TLS", "MODE", "SHADOW");

    private ConfigLoader() {}

    public static ThermoclineConfig load(Path file, Map<String, String> env) {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new InvalidConfigException(
                    List.of("config file " + file + " does not exist; pass an existing file with --config"));
        } catch (IOException e) {
            throw new InvalidConfigException(List.of("config file " + file + " cannot be read: " + e.getMessage()));
        }
        return parse(text, env);
    }

    /** Defaults and environment overrides only: for commands given everything by flags and env. */
    public static ThermoclineConfig fromEnvironment(Map<String, String> env) {
        return parse("", env);
    }

    public static ThermoclineConfig parse(String text, Map<String, String> env) {
        ObjectMapper mapper = ConfigMapper.create();
        List<String> problems = new ArrayList<>();
        ObjectNode tree = defaults(mapper, env);
        JsonNode user;
        try {
            user = text == null || text.isBlank() ? JsonNodeFactory.instance.objectNode() : mapper.readTree(text);
        } catch (JsonProcessingException e) {
            var loc = e.getLocation();
            throw new InvalidConfigException(List.of("config file is not valid YAML or JSON"
                    + (loc != null ? " (line " + loc.getLineNr() + ", column " + loc.getColumnNr() + ")" : "")
                    + ": " + e.getOriginalMessage()));
        }
        if (user != null && !user.isNull() && !user.isMissingNode()) {
            if (!user.isObject()) {
                throw new InvalidConfigException(
                        List.of(
                                "config file must be a mapping with sections proxy, tiers, fleet, collections, feeder, evictor, warmer, auth, tls, mode, shadow"));
            }
            merge(tree, user);
        }
        applyEnvironment(mapper, tree, env, problems);
        fillTierDefaults(tree);
        ThermoclineConfig config = bind(mapper, tree, defaults(mapper, env), problems);
        if (config == null) {
            throw new InvalidConfigException(problems);
        }
        List<String> typeProblems = List.copyOf(problems);
        for (String problem : ConfigValidator.validate(config)) {
            // a field already reported as mistyped holds a stand-in value: its checks would only confuse
            if (typeProblems.stream()
                    .noneMatch(t -> t.contains(":") && problem.startsWith(t.substring(0, t.indexOf(':') + 1)))) {
                problems.add(problem);
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidConfigException(problems);
        }
        return config;
    }

    private static ObjectNode defaults(ObjectMapper mapper, Map<String, String> env) {
        String host = env.getOrDefault("HOSTNAME", "thermocline-0");
        ThermoclineConfig defaults = new ThermoclineConfig(
                ProxyConfig.defaults(),
                new TiersConfig(null, null),
                new FleetConfig(1, host, null, 27018),
                List.of(),
                FeederConfig.defaults(),
                EvictorConfig.defaults(),
                WarmerConfig.defaults(),
                AuthConfig.defaults(),
                TlsConfig.defaults(),
                Mode.TIERED,
                ShadowConfig.defaults());
        return mapper.valueToTree(defaults);
    }

    private static void merge(ObjectNode target, JsonNode source) {
        for (Map.Entry<String, JsonNode> field : source.properties()) {
            JsonNode existing = target.get(field.getKey());
            if (existing instanceof ObjectNode existingObject
                    && field.getValue().isObject()) {
                merge(existingObject, field.getValue());
            } else {
                target.set(field.getKey(), field.getValue());
            }
        }
    }

    private static void fillTierDefaults(ObjectNode tree) {
        if (tree.get("tiers") instanceof ObjectNode tiers) {
            for (String tier : List.of("fast", "archive")) {
                if (tiers.get(tier) instanceof ObjectNode t && !t.has("connectionBudget")) {
                    t.put("connectionBudget", TierConfig.DEFAULT_CONNECTION_BUDGET);
                }
            }
        }
    }

    /** Every settable path of the schema, by its environment variable name. */
    private static Map<String, List<String>> environmentNames(ObjectMapper mapper) {
        ObjectNode template = defaults(mapper, Map.of());
        ObjectNode tiers = (ObjectNode) template.get("tiers");
        for (String tier : List.of("fast", "archive")) {
            tiers.putObject(tier).put("uri", "").put("connectionBudget", 0);
        }
        ((ObjectNode) template.get("fleet")).put("peerService", "").put("secretFile", "");
        ((ObjectNode) template.get("proxy"))
                .put("maxBufferedBytesPerConnection", 0)
                .put("maxBufferedBytes", 0);
        ((ObjectNode) template.get("auth")).put("usersFile", "");
        for (String file : List.of("certificateFile", "keyFile", "clientCaFile", "tierCaFile")) {
            ((ObjectNode) template.get("tls")).put(file, "");
        }
        Map<String, List<String>> names = new TreeMap<>();
        collect(template, new ArrayList<>(), names);
        return names;
    }

    private static void collect(JsonNode node, List<String> path, Map<String, List<String>> names) {
        if (!path.isEmpty()) {
            names.put(
                    ENV_PREFIX
                            + String.join(
                                    "_",
                                    path.stream().map(ConfigLoader::upperSnake).toList()),
                    List.copyOf(path));
        }
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> f : node.properties()) {
                path.add(f.getKey());
                collect(f.getValue(), path, names);
                path.remove(path.size() - 1);
            }
        }
    }

    static String upperSnake(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase();
    }

    private static void applyEnvironment(
            ObjectMapper mapper, ObjectNode tree, Map<String, String> env, List<String> problems) {
        Map<String, List<String>> names = environmentNames(mapper);
        Map<String, String> overrides = new LinkedHashMap<>(new TreeMap<>(env));
        for (var e : overrides.entrySet()) {
            String name = e.getKey();
            if (!name.startsWith(ENV_PREFIX)) {
                continue;
            }
            String section = name.substring(ENV_PREFIX.length()).split("_", 2)[0];
            if (!SECTIONS.contains(section)) {
                continue; // other THERMOCLINE_* variables belong to tools, not to this schema
            }
            List<String> path = names.get(name);
            if (path == null) {
                problems.add(name + ": no such setting"
                        + ConfigProblems.nearest(name, names.keySet())
                                .map(n -> "; did you mean " + n + "?")
                                .orElse("") + " Settable names are " + String.join(", ", names.keySet()));
                continue;
            }
            try {
                set(mapper, tree, path, e.getValue());
            } catch (JsonProcessingException ex) {
                problems.add(name + ": value is not valid YAML or JSON: " + ex.getOriginalMessage());
            }
        }
    }

    private static void set(ObjectMapper mapper, ObjectNode tree, List<String> path, String value)
            throws JsonProcessingException {
        ObjectNode parent = tree;
        for (String segment : path.subList(0, path.size() - 1)) {
            JsonNode child = parent.get(segment);
            parent = child instanceof ObjectNode o ? o : parent.putObject(segment);
        }
        String leaf = path.get(path.size() - 1);
        JsonNode current = parent.get(leaf);
        String trimmed = value.trim();
        if (current instanceof ArrayNode && !trimmed.startsWith("[")) {
            ArrayNode items = parent.putArray(leaf);
            for (String item : trimmed.split(",")) {
                if (!item.isBlank()) {
                    items.add(item.trim());
                }
            }
        } else if (current == null || current.isTextual() || current.isNull()) {
            parent.put(leaf, value);
        } else {
            parent.set(leaf, mapper.readTree(value));
        }
    }

    /**
     * Binds the tree to the schema, collecting every type error rather than the first: each mistyped
     * or unknown field is reported, replaced by its default (or dropped), and binding tried again.
     * Returns null when a problem cannot be stepped over.
     */
    private static ThermoclineConfig bind(
            ObjectMapper mapper, ObjectNode tree, ObjectNode defaults, List<String> problems) {
        for (int attempt = 0; attempt < 100; attempt++) {
            try {
                ThermoclineConfig config = mapper.treeToValue(tree, ThermoclineConfig.class);
                return config;
            } catch (JsonMappingException e) {
                String path = pathOf(e);
                problems.add(path + ": " + ConfigProblems.describe(e, tree));
                if (!ConfigProblems.replaceWithDefault(tree, defaults, e.getPath())) {
                    return null;
                }
            } catch (JsonProcessingException e) {
                problems.add(e.getOriginalMessage());
                return null;
            }
        }
        return null;
    }

    private static String pathOf(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (path.length() > 0) {
                    path.append('.');
                }
                path.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            }
        }
        return path.length() == 0 ? "config" : path.toString();
    }
}
