package io.thermocline.app.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URL;
import org.junit.jupiter.api.Test;

/** The production logback.xml: THERMOCLINE_LOG_FORMAT picks text or JSON, and neither lets a stack trace break a line. */
class LogFormatTest {

    private static final String LOGBACK_XML = "logback.xml";

    @Test
    void aJsonEventIsOneLineWithTheFieldsALogPipelineIndexes() throws Exception {
        LoggingEvent event = new LoggingEvent("x", new LoggerContext().getLogger("io.thermocline.proxy.topology.TierMonitor"), Level.WARN,
                "event=member_changed tier={} error=\"{}\"", new IllegalStateException("Connection refused\nsecond line"),
                new Object[] {"archive", "refused"});
        event.setThreadName("thermocline-io-1");
        String line = new JsonLineLayout().doLayout(event);
        assertThat(line.stripTrailing()).doesNotContain("\n").doesNotContain("\r");
        JsonNode json = new ObjectMapper().readTree(line);
        assertThat(json.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z");
        assertThat(json.get("level").asText()).isEqualTo("WARN");
        assertThat(json.get("logger").asText()).isEqualTo("io.thermocline.proxy.topology.TierMonitor");
        assertThat(json.get("thread").asText()).isEqualTo("thermocline-io-1");
        assertThat(json.get("message").asText()).isEqualTo("event=member_changed tier=archive error=\"refused\"");
        assertThat(json.get("exception").asText()).contains("IllegalStateException: Connection refused").contains("\tat ");
    }

    @Test
    void theFormatVariableSelectsTheJsonAppenderAndTextIsTheDefault() throws Exception {
        assertThat(rootAppenderUnder(null)).isEqualTo("text");
        assertThat(rootAppenderUnder("json")).isEqualTo("json");
        LoggerContext json = configured("json");
        ConsoleAppender<?> appender = (ConsoleAppender<?>) json.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("json");
        assertThat(((LayoutWrappingEncoder<?>) appender.getEncoder()).getLayout()).isInstanceOf(JsonLineLayout.class);
    }

    @Test
    void aTextEventKeepsItsStackTraceOnItsLine() throws Exception {
        LoggerContext text = configured(null);
        ConsoleAppender<?> appender = (ConsoleAppender<?>) text.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("text");
        @SuppressWarnings("unchecked")
        var encoder = (ch.qos.logback.classic.encoder.PatternLayoutEncoder) (Object) appender.getEncoder();
        LoggingEvent event = new LoggingEvent("x", text.getLogger("t"), Level.ERROR, "event=crash", new IllegalStateException("boom"), null);
        String line = new String(encoder.encode(event), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(line.stripTrailing()).contains("event=crash").contains("IllegalStateException: boom | at ").doesNotContain("\n");
    }

    @Test
    void anUnknownFormatOrLevelIsRefusedBeforeLoggingStarts() {
        assertThat(LogFormat.problem(java.util.Map.of("THERMOCLINE_LOG_FORMAT", "xml"))).get().asString()
                .contains("'xml' is not a log format; use text (the default) or json");
        assertThat(LogFormat.problem(java.util.Map.of("THERMOCLINE_LOG_LEVEL", "loud"))).get().asString().contains("not a log level");
        assertThat(LogFormat.problem(java.util.Map.of("THERMOCLINE_LOG_FORMAT", "json", "THERMOCLINE_LOG_LEVEL", "debug"))).isEmpty();
    }

    private static String rootAppenderUnder(String format) throws Exception {
        Logger root = configured(format).getLogger(Logger.ROOT_LOGGER_NAME);
        StringBuilder names = new StringBuilder();
        root.iteratorForAppenders().forEachRemaining(a -> names.append(a.getName()));
        return names.toString();
    }

    private static LoggerContext configured(String format) throws Exception {
        LoggerContext context = new LoggerContext();
        if (format != null) {
            context.putProperty("THERMOCLINE_LOG_FORMAT", format); // the variable is looked up here before the environment
        }
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        URL xml = LogFormatTest.class.getClassLoader().getResource(LOGBACK_XML);
        configurator.doConfigure(xml);
        return context;
    }
}
