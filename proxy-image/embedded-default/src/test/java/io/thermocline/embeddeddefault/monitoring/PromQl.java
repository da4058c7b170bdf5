package io.thermocline.embeddeddefault.monitoring;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A PromQL syntax checker for the expressions under examples/monitoring (no Java PromQL parser
 * is served by the registries here). Recursive descent over Prometheus's grammar: selectors with
 * matchers, range and subquery brackets, offset, aggregations with by/without, the functions
 * Prometheus knows, binary operators with bool/on/ignoring/group_left/group_right and their
 * precedence. It checks argument types where a mistake is common (rate() of an instant vector,
 * an aggregation of a scalar) and collects the metric names the expression reads.
 */
public final class PromQl {

    enum Type { SCALAR, STRING, INSTANT, RANGE }

    private static final Set<String> AGGREGATIONS = Set.of("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
            "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio");
    private static final Set<String> PARAMETERIZED = Set.of("count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio");
    private static final Set<String> RANGE_FUNCTIONS = Set.of("rate", "irate", "increase", "delta", "idelta", "deriv", "changes",
            "resets", "predict_linear", "holt_winters", "avg_over_time", "min_over_time", "max_over_time", "sum_over_time",
            "count_over_time", "quantile_over_time", "stddev_over_time", "stdvar_over_time", "last_over_time",
            "present_over_time", "absent_over_time");
    private static final Set<String> INSTANT_FUNCTIONS = Set.of("abs", "absent", "ceil", "floor", "round", "exp", "ln", "log2",
            "log10", "sqrt", "clamp", "clamp_min", "clamp_max", "histogram_quantile", "label_replace", "label_join", "sort",
            "sort_desc", "timestamp", "scalar", "vector", "time", "day_of_month", "day_of_week", "hour", "minute", "month",
            "year", "sgn");
    private static final List<List<String>> PRECEDENCE = List.of(List.of("or"), List.of("and", "unless"),
            List.of("==", "!=", "<=", ">=", "<", ">"), List.of("+", "-"), List.of("*", "/", "%", "atan2"), List.of("^"));

    private final List<String> tokens;
    private final String source;
    private final Set<String> metrics = new TreeSet<>();
    private int at;

    private PromQl(String source) {
        this.source = source;
        this.tokens = tokenize(source);
    }

    /** The metric names {@code expression} reads; throws IllegalArgumentException naming the problem. */
    public static Set<String> metricNames(String expression) {
        PromQl parser = new PromQl(expression);
        Type type = parser.expression(0);
        if (parser.at != parser.tokens.size()) {
            throw parser.error("unexpected '" + parser.peek() + "'");
        }
        if (type == Type.RANGE) {
            throw parser.error("a range vector cannot be the result of a query");
        }
        return parser.metrics;
    }

    private Type expression(int level) {
        if (level == PRECEDENCE.size()) {
            return unary();
        }
        Type left = expression(level + 1);
        while (peek() != null && PRECEDENCE.get(level).contains(peek())) {
            String op = next();
            accept("bool");
            if (accept("on") || accept("ignoring")) {
                labels();
            }
            if (accept("group_left") || accept("group_right")) {
                if ("(".equals(peek())) {
                    labels();
                }
            }
            // ^ is right-associative, the others left-associative
            Type right = op.equals("^") ? expression(level) : expression(level + 1);
            if (left == Type.RANGE || right == Type.RANGE || left == Type.STRING || right == Type.STRING) {
                throw error("operator " + op + " needs instant vectors or scalars");
            }
            if (level <= 1 && (left == Type.SCALAR || right == Type.SCALAR)) {
                throw error("set operator " + op + " needs vectors on both sides");
            }
            left = left == Type.SCALAR && right == Type.SCALAR ? Type.SCALAR : Type.INSTANT;
        }
        return left;
    }

    private Type unary() {
        if (accept("-") || accept("+")) {
            return unary();
        }
        Type type = primary();
        if (accept("[")) {
            if (type != Type.INSTANT) {
                throw error("only an instant vector can take a range");
            }
            duration();
            boolean subquery = accept(":");
            if (subquery && !"]".equals(peek())) {
                duration();
            }
            expect("]");
            type = Type.RANGE;
        }
        if (accept("offset")) {
            accept("-");
            duration();
        }
        return type;
    }

    private Type primary() {
        String token = next();
        if (token == null) {
            throw error("expression ends early");
        }
        if (token.equals("(")) {
            Type inner = expression(0);
            expect(")");
            return inner;
        }
        if (token.startsWith("\"") || token.startsWith("'")) {
            return Type.STRING;
        }
        if (Character.isDigit(token.charAt(0)) || token.startsWith(".")) {
            return Type.SCALAR;
        }
        if (token.equals("{")) {
            matchers();
            return Type.INSTANT;
        }
        if (!isIdentifier(token)) {
            throw error("unexpected '" + token + "'");
        }
        if (AGGREGATIONS.contains(token)) {
            return aggregation(token);
        }
        if ("(".equals(peek())) {
            return function(token);
        }
        metrics.add(token);
        if (accept("{")) {
            matchers();
        }
        return Type.INSTANT;
    }

    private Type aggregation(String name) {
        boolean grouped = false;
        if (accept("by") || accept("without")) {
            labels();
            grouped = true;
        }
        expect("(");
        if (PARAMETERIZED.contains(name)) {
            expression(0);
            expect(",");
        }
        if (expression(0) != Type.INSTANT) {
            throw error(name + "() aggregates an instant vector");
        }
        expect(")");
        if (!grouped && (accept("by") || accept("without"))) {
            labels();
        }
        return Type.INSTANT;
    }

    private Type function(String name) {
        expect("(");
        List<Type> args = new ArrayList<>();
        if (!accept(")")) {
            do {
                args.add(expression(0));
            } while (accept(","));
            expect(")");
        }
        if (RANGE_FUNCTIONS.contains(name)) {
            if (args.isEmpty() || args.get(0) != Type.RANGE) {
                throw error(name + "() needs a range vector, e.g. " + name + "(x[5m])");
            }
        } else if (INSTANT_FUNCTIONS.contains(name)) {
            if (args.contains(Type.RANGE)) {
                throw error(name + "() takes no range vector");
            }
            if (name.equals("histogram_quantile") && (args.size() != 2 || args.get(0) != Type.SCALAR)) {
                throw error("histogram_quantile(φ, buckets) takes a scalar and a vector");
            }
        } else {
            throw error("unknown function " + name + "()");
        }
        return Set.of("scalar", "time").contains(name) ? Type.SCALAR : Type.INSTANT;
    }

    private void matchers() {
        while (!accept("}")) {
            String label = next();
            if (label == null || !isIdentifier(label)) {
                throw error("expected a label name in a selector, got '" + label + "'");
            }
            String op = next();
            if (!Set.of("=", "!=", "=~", "!~").contains(op)) {
                throw error("expected =, !=, =~ or !~ after " + label + ", got '" + op + "'");
            }
            String value = next();
            if (value == null || !(value.startsWith("\"") || value.startsWith("'"))) {
                throw error("label " + label + " needs a quoted value");
            }
            if (!accept(",") && !"}".equals(peek())) {
                throw error("expected , or } in a selector, got '" + peek() + "'");
            }
        }
    }

    private void labels() {
        expect("(");
        while (!accept(")")) {
            String label = next();
            if (label == null || !isIdentifier(label)) {
                throw error("expected a label name, got '" + label + "'");
            }
            if (!accept(",") && !")".equals(peek())) {
                throw error("expected , or ) in a label list, got '" + peek() + "'");
            }
        }
    }

    private void duration() {
        String token = next();
        if (token == null || !token.matches("(\\d+(ms|s|m|h|d|w|y))+")) {
            throw error("expected a duration such as 5m, got '" + token + "'");
        }
    }

    private static boolean isIdentifier(String token) {
        return token.matches("[a-zA-Z_:][a-zA-Z0-9_:]*");
    }

    private String peek() {
        return at < tokens.size() ? tokens.get(at) : null;
    }

    private String next() {
        return at < tokens.size() ? tokens.get(at++) : null;
    }

    private boolean accept(String token) {
        if (token.equals(peek())) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(String token) {
        if (!accept(token)) {
            throw error("expected '" + token + "', got '" + peek() + "'");
        }
    }

    private IllegalArgumentException error(String problem) {
        return new IllegalArgumentException(problem + " at token " + at + " in: " + source);
    }

    private static List<String> tokenize(String s) {
        List<String> out = new ArrayList<>();
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '"' || c == '\'') {
                int end = i + 1;
                while (end < s.length() && s.charAt(end) != c) {
                    end += s.charAt(end) == '\\' ? 2 : 1;
                }
                if (end >= s.length()) {
                    throw new IllegalArgumentException("unterminated string in: " + s);
                }
                out.add(s.substring(i, end + 1));
                i = end + 1;
            } else if (Character.isLetterOrDigit(c) || c == '_' || c == '.') {
                int end = i;
                while (end < s.length() && (Character.isLetterOrDigit(s.charAt(end)) || s.charAt(end) == '_' || s.charAt(end) == '.'
                        // ':' belongs to a recording rule's name, but separates a subquery's range and step
                        || (s.charAt(end) == ':' && !Character.isDigit(c)))) {
                    end++;
                }
                out.add(s.substring(i, end));
                i = end;
            } else {
                String two = i + 1 < s.length() ? s.substring(i, i + 2) : "";
                if (Set.of("==", "!=", "<=", ">=", "=~", "!~").contains(two)) {
                    out.add(two);
                    i += 2;
                } else if ("+-*/%^<>=,(){}[]:@".indexOf(c) >= 0) {
                    out.add(String.valueOf(c));
                    i++;
                } else {
                    throw new IllegalArgumentException("unexpected character '" + c + "' in: " + s);
                }
            }
        }
        return out;
    }

}
