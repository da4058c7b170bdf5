package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Where a command's settings come from: {@code --config FILE} and the {@code THERMOCLINE_*}
 * environment, which overrides the file, both validated by the one config loader. A picocli mixin
 * of every command that reads the config file (the proxy's own {@code --config} is optional and
 * described for the proxy, so it keeps its own).
 */
final class ConfigSource {

    @Option(names = "--config", paramLabel = "FILE", description = "Config file (YAML or JSON), as for the proxy.")
    Path config;

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    private final Map<String, String> environment;

    /** The process's environment. */
    ConfigSource() {
        this(System.getenv());
    }

    ConfigSource(Map<String, String> environment) {
        this.environment = environment;
    }

    /** The validated config, or null after printing every problem on the command's stderr (exit code 2). */
    ThermoclineConfig load() {
        return WorkerRuntime.load(
                command.name(), config, environment, command.commandLine().getErr());
    }
}
