package io.thermocline.benchmarks.ycsb;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thermocline.benchmarks.ycsb.ProxyVsDirectBenchmark.Result;
import io.thermocline.benchmarks.ycsb.ProxyVsDirectBenchmark.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A cell one of whose sides measured nothing (every proxied operation refused, say) fails the run instead of printing a ratio. */
@Timeout(10)
class ProxyVsDirectBenchmarkTest {

    @Test
    void aSideThatMeasuredNothingOrMostlyErrorsFailsTheRun() {
        assertThatCode(() -> ProxyVsDirectBenchmark.measuredSomething(row(side(5000, 0), side(4000, 3), side(4500, 0))))
                .doesNotThrowAnyException();
        Result refused = side(0, 64);
        refused.firstError = "com.mongodb.MongoCommandException: Command failed with error 13 (Unauthorized)";
        assertThatThrownBy(() -> ProxyVsDirectBenchmark.measuredSomething(row(side(5000, 0), refused, side(4500, 0))))
                .hasMessageContaining("the proxy side measured 0 operations")
                .hasMessageContaining("Unauthorized");
        assertThatThrownBy(() ->
                        ProxyVsDirectBenchmark.measuredSomething(row(side(5000, 0), side(4000, 0), side(4500, 900))))
                .hasMessageContaining("byte relay");
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
