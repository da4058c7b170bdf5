package io.thermocline.proxy;

import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The proxy's answer to a client's awaitable hello (server discovery and monitoring: topologyVersion
 * and maxAwaitTimeMS), as a mongos gives it: at once when the client's topologyVersion is not the
 * current one, and at once with ShutdownInProgress when the proxy starts draining (quiesce mode).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AwaitableHelloTest {
    private static final int LONG_WAIT_MS = 30_000;

    @Test
    void aTopologyVersionWithAnotherCounterIsAnsweredAtOnce() throws Exception {
        try (ProxyFixture fixture = ProxyFixture.start(); WireClient c = new WireClient(fixture.port())) {
            BsonDocument tv = c.command(hello()).body().getDocument("topologyVersion");
            BsonDocument older = new BsonDocument("processId", tv.get("processId"))
                    .append("counter", new BsonInt64(tv.getInt64("counter").getValue() - 1));
            c.send(new OpMsg(c.nextRequestId(), 0, 0, OpMsg.raw(awaitable(older)), List.of()), null);
            c.timeout(LONG_WAIT_MS / 2); // far below maxAwaitTimeMS, far above any stall of a loaded machine
            OpMsg reply = (OpMsg) c.receive().message();
            assertThat(reply.body().getDouble("ok").getValue()).isEqualTo(1.0);
            assertThat(reply.body().getDocument("topologyVersion")).isEqualTo(tv);
        }
    }

    @Test
    void drainingAnswersAWaitingStreamAtOnceWithShutdownInProgressAndANewTopologyVersion() throws Exception {
        ProxyFixture fixture = ProxyFixture.start();
        CompletableFuture<Void> closing = null;
        try (WireClient c = new WireClient(fixture.port())) {
            BsonDocument tv = c.command(hello()).body().getDocument("topologyVersion");
            int requestId = c.nextRequestId();
            c.send(new OpMsg(requestId, 0, OpMsg.EXHAUST_ALLOWED, OpMsg.raw(awaitable(tv)), List.of()), null);
            // the drain must find the hello waiting (one arriving after it is refused as any new request is)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (fixture.proxy().awaitableHellosWaiting() == 0) {
                assertThat(System.nanoTime()).as("the awaitable hello waits at the proxy").isLessThan(deadline);
                Thread.sleep(10);
            }
            closing = CompletableFuture.runAsync(fixture::close);
            // a reply at maxAwaitTimeMS would be an ordinary hello: code 91 says the drain answered it (no clock needed)
            c.timeout(LONG_WAIT_MS + 10_000);
            OpMsg reply = (OpMsg) c.receive().message();
            assertThat(reply.responseTo()).isEqualTo(requestId);
            assertThat(reply.moreToCome()).isFalse();
            assertThat(reply.body().getInt32("code").getValue()).isEqualTo(91);
            BsonDocument after = reply.body().getDocument("topologyVersion");
            assertThat(after.getObjectId("processId")).isEqualTo(tv.getObjectId("processId"));
            assertThat(after.getInt64("counter").getValue()).isGreaterThan(tv.getInt64("counter").getValue());
        } finally {
            if (closing == null) {
                fixture.close();
            } else {
                closing.get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static BsonDocument hello() {
        return new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    private static BsonDocument awaitable(BsonDocument topologyVersion) {
        return hello().append("topologyVersion", topologyVersion).append("maxAwaitTimeMS", new BsonInt32(LONG_WAIT_MS));
    }
}
