package io.thermocline.operator.argocd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.luaj.vm2.Globals;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.lib.jse.JsePlatform;

/** Runs examples/argocd/health.lua (as Argo CD would, with the resource as global {@code obj}) over health_test.yaml. */
class HealthLuaTest {

    private static final Path DIR = Path.of("..", "examples", "argocd");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    static Stream<Arguments> cases() throws IOException {
        List<Arguments> cases = new ArrayList<>();
        for (JsonNode test : YAML.readTree(DIR.resolve("health_test.yaml").toFile()).get("tests")) {
            cases.add(Arguments.of(test.get("inputPath").asText(), test.get("healthStatus").get("status").asText(),
                    test.get("healthStatus").get("message").asText()));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("cases")
    void healthScriptMapsConditions(String input, String status, String message) throws IOException {
        Globals globals = JsePlatform.standardGlobals();
        globals.set("obj", toLua(YAML.readTree(DIR.resolve(input).toFile())));
        LuaValue result = globals.load(Files.readString(DIR.resolve("health.lua")), "health.lua").call();
        assertThat(result.get("status").tojstring()).isEqualTo(status);
        assertThat(result.get("message").tojstring()).isEqualTo(message);
    }

    @Test
    void argocdConfigMapEmbedsTheSameScript() throws IOException {
        JsonNode cm = YAML.readTree(DIR.resolve("argocd-cm.yaml").toFile());
        assertThat(cm.get("data").get("resource.customizations.health.thermocline.io_ThermoclineCluster").asText())
                .isEqualTo(Files.readString(DIR.resolve("health.lua")));
    }

    private static LuaValue toLua(JsonNode node) {
        if (node == null || node.isNull()) {
            return LuaValue.NIL;
        }
        if (node.isObject()) {
            LuaTable table = new LuaTable();
            node.fields().forEachRemaining(f -> table.set(f.getKey(), toLua(f.getValue())));
            return table;
        }
        if (node.isArray()) {
            LuaTable table = new LuaTable();
            for (int i = 0; i < node.size(); i++) {
                table.set(i + 1, toLua(node.get(i)));
            }
            return table;
        }
        if (node.isBoolean()) {
            return LuaValue.valueOf(node.booleanValue());
        }
        if (node.isIntegralNumber()) {
            return LuaValue.valueOf(node.longValue());
        }
        if (node.isNumber()) {
            return LuaValue.valueOf(node.doubleValue());
        }
        return LuaValue.valueOf(node.asText());
    }
}
