package io.thermocline.app.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * One log event as one line of JSON ({@code THERMOCLINE_LOG_FORMAT=json}, docs/operations in
 * docs/proxy.md): {@code time} (ISO-8601, UTC), {@code level}, {@code logger}, {@code thread},
 * {@code message} and, when there is one, {@code exception} with the whole stack trace as one string,
 * so a trace never splits an event over lines.
 */
public final class JsonLineLayout extends LayoutBase<ILoggingEvent> {

    private static final JsonFactory JSON = new JsonFactory();

    @Override
    public String doLayout(ILoggingEvent event) {
        StringWriter line = new StringWriter(256);
        try (JsonGenerator g = JSON.createGenerator(line)) {
            g.writeStartObject();
            g.writeStringField("time", Instant.ofEpochMilli(event.getTimeStamp()).toString());
            g.writeStringField("level", event.getLevel().toString());
            g.writeStringField("logger", event.getLoggerName());
            g.writeStringField("thread", event.getThreadName());
            g.writeStringField("message", event.getFormattedMessage());
            IThrowableProxy thrown = event.getThrowableProxy();
            if (thrown != null) {
                g.writeStringField("exception", ThrowableProxyUtil.asString(thrown));
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return line.append(CoreConstants.LINE_SEPARATOR).toString();
    }
}
