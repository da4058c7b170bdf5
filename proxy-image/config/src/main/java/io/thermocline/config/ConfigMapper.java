package io.thermocline.config;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.io.IOException;
import java.time.Duration;

/** The Jackson mapper for config files: YAML (JSON is valid YAML), durations in short form, unknown fields rejected. */
final class ConfigMapper {

    private ConfigMapper() {
    }

    static ObjectMapper create() {
        SimpleModule durations = new SimpleModule("thermocline-durations");
        durations.addSerializer(Duration.class, new JsonSerializer<>() {
            @Override
            public void serialize(Duration value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
                gen.writeString(Durations.format(value));
            }
        });
        durations.addDeserializer(Duration.class, new JsonDeserializer<>() {
            @Override
            public Duration deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
                try {
                    return Durations.parse(p.getValueAsString(p.getText()));
                } catch (IllegalArgumentException e) {
                    throw InvalidFormatException.from(p, e.getMessage(), p.getText(), Duration.class);
                }
            }
        });
        YAMLFactory yaml = YAMLFactory.builder()
                .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                .build();
        return new ObjectMapper(yaml)
                .registerModule(durations)
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .setDefaultPropertyInclusion(JsonInclude.Include.NON_NULL);
    }
}
