package io.thermocline.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.UncheckedIOException;

/** Renders a config as the YAML file the data plane loads (used by the operator for the ConfigMap). */
public final class ConfigWriter {

    private ConfigWriter() {
    }

    public static String toYaml(ThermoclineConfig config) {
        try {
            return ConfigMapper.create().writeValueAsString(config);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
