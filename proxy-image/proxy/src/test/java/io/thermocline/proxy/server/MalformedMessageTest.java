package io.thermocline.proxy.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.thermocline.proxy.MalformedMessages;
import io.thermocline.proxy.ProxyFixture;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.MalformedMessageException;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.OpReply;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireCodec;
import io.thermocline.wire.WireMessage;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a malformed message gets from the proxy's client pipeline (its own frame decoder, encoder
 * and {@link ClientConnection}), fed one byte at a time through an {@link EmbeddedChannel}: every
 * well-formed message before it is answered, the malformed one gets a ProtocolError naming its
 * request id (when its header was readable) and is counted, the connection is closed, and a
 * message cut short leaves the connection waiting for the rest. Commands are answered by an echo
 * handler so that every answer is synchronous; the handshake over OP_QUERY is the proxy's own.
 */
@Timeout(120)
class MalformedMessageTest {
    private static final long SEED = 20261201L;
    private static final int CASES = 3000;
    private static final int MAX = 48_000_000;

    private static ProxyFixture fixture;

    @BeforeAll
    static void start() throws InterruptedException {
        fixture = ProxyFixture.start();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (fixture.proxy().topology(Tier.ARCHIVE).primary() == null && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    /** What the client saw: the replies in order, as "responseTo kind", and whether the connection stayed open. */
    private record Outcome(List<String> replies, boolean open) {
    }

    private static EmbeddedChannel pipeline() {
        ClientReplies replies = new ClientReplies(fixture.proxy().metrics());
        return new EmbeddedChannel(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                fixture.proxy().installClientPipeline(ch.pipeline(), request -> replies.reply(request,
                        new BsonDocument("ok", new BsonInt32(1)).append("echo", new BsonString(request.name()))));
            }
        });
    }

    private static Outcome feedByteByByte(byte[] bytes) {
        EmbeddedChannel channel = pipeline();
        for (byte b : bytes) {
            if (!channel.isOpen()) {
                break;
            }
            channel.writeInbound(Unpooled.wrappedBuffer(new byte[]{b}));
        }
        channel.runPendingTasks();
        boolean open = channel.isOpen();
        List<String> replies = new ArrayList<>();
        ByteBuf out = Unpooled.buffer();
        for (Object o = channel.readOutbound(); o != null; o = channel.readOutbound()) {
            ByteBuf b = (ByteBuf) o;
            out.writeBytes(b);
            b.release();
        }
        while (out.isReadable()) {
            ByteBuf frame = out.readSlice(out.getIntLE(out.readerIndex()));
            WireMessage m = WireCodec.decode(frame, MAX, false).message();
            replies.add(m.responseTo() + " " + kind(m));
        }
        out.release();
        channel.finishAndReleaseAll();
        return new Outcome(replies, open);
    }

    private static String kind(WireMessage reply) {
        if (reply instanceof OpReply) {
            return "legacy";
        }
        BsonDocument body = ((OpMsg) reply).body();
        if (body.getNumber("ok").intValue() == 1) {
            return "answer";
        }
        assertThat(body.getString("codeName").getValue()).isEqualTo(MongoError.PROTOCOL_ERROR.codeName());
        return "protocolError " + body.getInt32("code").getValue();
    }

    /**
     * The outcome the protocol asks for, read off the bytes: frame by frame, an answer to each
     * message, a ProtocolError (to a readable request id) and a close at the first that breaks
     * the protocol, and waiting when the bytes end inside a frame. Bytes arrive one at a time, so an
     * impossible length is seen before the request id behind it. Counts malformed messages in {@code malformed}.
     */
    private static Outcome expected(byte[] bytes, int[] malformed) {
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        List<String> replies = new ArrayList<>();
        int pos = 0;
        while (bytes.length - pos >= 4) {
            int length = in.getInt(pos);
            if (length < 16 || length > MAX) {
                // judged on its first four bytes, before the request id arrives: closed without an answer
                return closed(replies, 0, malformed);
            }
            if (bytes.length - pos < length) {
                break;
            }
            byte[] frame = new byte[length];
            System.arraycopy(bytes, pos, frame, 0, length);
            Inbound inbound;
            try {
                inbound = WireCodec.decode(frame, MAX);
            } catch (MalformedMessageException e) {
                return closed(replies, e.requestId(), malformed);
            }
            WireMessage m = inbound.message();
            if (m instanceof OpMsg msg) {
                if (msg.body().isEmpty()) {
                    return new Outcome(replies, false); // no command name: nothing to answer, the connection is dropped
                }
                if (!msg.moreToCome()) {
                    replies.add(m.requestId() + " answer");
                }
            } else if (m instanceof OpQuery) {
                replies.add(m.requestId() + " legacy");
            } else {
                replies.add(m.requestId() + " protocolError 17"); // a client sent a server's message
                return new Outcome(replies, false);
            }
            pos += length;
        }
        return new Outcome(replies, true);
    }

    private static Outcome closed(List<String> replies, int requestId, int[] malformed) {
        malformed[0]++;
        if (requestId != 0) {
            replies.add(requestId + " protocolError 17");
        }
        return new Outcome(replies, false);
    }

    @Test
    void everyMalformedMessageGetsAProtocolErrorAndACloseAndIsCounted() {
        List<byte[]> corpus = MalformedMessages.corpus();
        Random random = new Random(SEED);
        int[] malformed = {0};
        int closedCases = 0;
        double before = MalformedMessages.countedBy(fixture.proxy().metrics());
        for (int n = 0; n < CASES; n++) {
            byte[] bytes = MalformedMessages.malformed(random, corpus);
            Outcome expected = expected(bytes, malformed);
            assertThat(feedByteByByte(bytes)).as("case %d (seed %d)", n, SEED).isEqualTo(expected);
            closedCases += expected.open() ? 0 : 1;
        }
        assertThat(MalformedMessages.countedBy(fixture.proxy().metrics()) - before).isEqualTo(malformed[0]);
        assertThat(closedCases).as("the mutations break most messages").isGreaterThan(CASES / 2);
    }

    @Test
    void aBrokenBodyIsAnsweredWithProtocolErrorToItsRequestIdAfterTheMessagesBeforeIt() {
        byte[] good = WireCodec.encodeToBytes(Outbound.plain(OpMsg.request(7, BsonDocument.parse("{ping: 1, $db: 'admin'}"))));
        byte[] bad = WireCodec.encodeToBytes(Outbound.plain(OpMsg.request(9, BsonDocument.parse("{ping: 1, $db: 'admin'}"))));
        bad[bad.length - 1] = 1; // the body no longer ends with its terminating zero
        byte[] both = new byte[good.length + bad.length];
        System.arraycopy(good, 0, both, 0, good.length);
        System.arraycopy(bad, 0, both, good.length, bad.length);
        assertThat(feedByteByByte(both)).isEqualTo(new Outcome(List.of("7 answer", "9 protocolError 17"), false));
    }

    @Test
    void aMessageCutShortIsAwaitedNotAnswered() {
        byte[] ping = WireCodec.encodeToBytes(Outbound.plain(OpMsg.request(5, BsonDocument.parse("{ping: 1, $db: 'admin'}"))));
        byte[] cut = Arrays.copyOf(ping, ping.length - 1);
        assertThat(feedByteByByte(cut)).isEqualTo(new Outcome(List.of(), true));
    }

    @Test
    void anImpossibleLengthClosesWithoutAnswerWhenNoRequestIdIsReadable() {
        assertThat(feedByteByByte(new byte[]{3, 0, 0, 0})).isEqualTo(new Outcome(List.of(), false));
    }

    @Test
    void theLegacyHandshakeIsAnsweredOverOpQuery() {
        byte[] isMaster = WireCodec.encodeToBytes(Outbound.plain(new OpQuery(4, 0, 0, "admin.$cmd", 0, -1,
                OpMsg.raw(BsonDocument.parse("{isMaster: 1}")), null)));
        assertThat(feedByteByByte(isMaster)).isEqualTo(new Outcome(List.of("4 legacy"), true));
    }
}
