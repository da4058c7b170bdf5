package io.thermocline.benchmarks.ycsb;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thermocline.benchmarks.ycsb.ProxyVsDirectBenchmark.Result;
import io.thermocline.benchmarks.ycsb.ProxyVsDirectBenchmark.Row;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A cell one of whose sides measured nothing (every proxied operation refused, say) fails the run instead of printing a ratio. */
@Timeout(10)
class ProxyVsDirectBenchmarkTest {

    private static final Path LOGS = Path.of("/tmp/thermocline-bench-test");

    @Test
    void aSideThatMeasuredNothingOrMostlyErrorsFailsTheRun() {
        assertThatCode(() -> ProxyVsDirectBenchmark.measuredSomething(
                        row(side(5000, 0), side(4000, 3), side(4500, 0)), LOGS))
                .doesNotThrowAnyException();
        Result refused = side(0, 64);
        refused.firstError = "com.mongodb.MongoCommandException: Command failed with error 13 (Unauthorized)";
        assertThatThrownBy(() ->
                        ProxyVsDirectBenchmark.measuredSomething(row(side(5000, 0), refused, side(4500, 0)), LOGS))
                .hasMessageContaining("the proxy side measured 0 operations")
                .hasMessageContaining("Unauthorized")
                .hasMessageContaining(LOGS.resolve("proxy.log").toString())
                .hasMessageContaining(LOGS.resolve("users.yaml").toString());
        assertThatThrownBy(() -> ProxyVsDirectBenchmark.measuredSomething(
                        row(side(5000, 0), side(4000, 0), side(4500, 900)), LOGS))
                .hasMessageContaining("byte relay")
                .hasMessageContaining(LOGS.resolve("relay.log").toString());
    }

    private static Row row(Result direct, Result proxy, Result relay) {
        return new Row("A", 8, direct, proxy, relay);
    }

    private static Result side(long operations, long errors) {
        Result r = new Result();
        r.operations = operations;
        r.errors = errors;
        return r;
    }
}
