package io.thermocline.proxy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.bson.BsonDocument;

/**
 * The rows of {@code auth/command-roles.table}: a command, the database it is sent to, the users mongod lets run it,
 * and, where the proxy differs, the users the proxy lets run it and why. Aliases ({@code @read}) expand to users.
 */
record CommandRoleRows(List<Row> rows) {
    static final String RESOURCE = "/auth/command-roles.table";

    /** One row; {@code proxy} equals {@code mongod} unless the row records a difference. */
    record Row(int line, String command, String db, Set<String> mongod, Set<String> proxy, String why) {
        BsonDocument body(String user) {
            return BsonDocument.parse(command.replace("%user", user));
        }

        String name() {
            return BsonDocument.parse(command.replace("%user", "u")).getFirstKey();
        }

        boolean differs() {
            return !why.isEmpty();
        }

        @Override
        public String toString() {
            return "line " + line + ": " + command + " on " + db;
        }
    }

    static CommandRoleRows load() {
        try (InputStream in = CommandRoleRows.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the test class path");
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static CommandRoleRows parse(String text) {
        Map<String, Set<String>> aliases = new HashMap<>();
        List<Row> rows = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (line.startsWith("@")) {
                int eq = line.indexOf('=');
                aliases.put(line.substring(0, eq).strip(), users(line.substring(eq + 1), aliases, i + 1));
                continue;
            }
            String[] cells = line.split("\\|", -1);
            if (cells.length < 3 || cells.length > 4) {
                throw new IllegalArgumentException(
                        "line " + (i + 1) + ": command | db | mongod [| proxy -- why], not " + line);
            }
            Set<String> mongod = users(cells[2], aliases, i + 1);
            Set<String> proxy = mongod;
            String why = "";
            if (cells.length == 4) {
                String[] differs = cells[3].split(" -- ", 2);
                if (differs.length != 2 || differs[1].isBlank()) {
                    throw new IllegalArgumentException(
                            "line " + (i + 1) + ": a difference from mongod says why after ' -- '");
                }
                proxy = users(differs[0].replaceFirst("^\\s*proxy:", ""), aliases, i + 1);
                why = differs[1].strip();
            }
            rows.add(new Row(i + 1, cells[0].strip(), cells[1].strip(), mongod, proxy, why));
        }
        return new CommandRoleRows(List.copyOf(rows));
    }

    private static Set<String> users(String cell, Map<String, Set<String>> aliases, int line) {
        Set<String> out = new TreeSet<>();
        for (String word : cell.strip().split("\\s+")) {
            if (word.isEmpty() || word.equals("-")) {
                continue;
            }
            if (word.startsWith("@")) {
                Set<String> expanded = aliases.get(word);
                if (expanded == null) {
                    throw new IllegalArgumentException("line " + line + ": no alias " + word);
                }
                out.addAll(expanded);
            } else {
                out.add(word);
            }
        }
        return out;
    }

    /** Every user a row names, for checking them against the users the test logs in. */
    Set<String> namedUsers() {
        Set<String> all = new TreeSet<>();
        rows.forEach(r -> {
            all.addAll(r.mongod());
            all.addAll(r.proxy());
        });
        return all;
    }

    /** The command names with a row, in lower case (a server's command names are matched case-insensitively here). */
    Set<String> commandNames() {
        Set<String> names = new TreeSet<>();
        rows.forEach(r -> names.add(r.name().toLowerCase()));
        return names;
    }
}
