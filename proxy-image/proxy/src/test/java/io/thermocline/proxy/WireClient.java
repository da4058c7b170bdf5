package io.thermocline.proxy;

import io.thermocline.wire.Compressor;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireCodec;
import io.thermocline.wire.WireMessage;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bson.BsonDocument;

/** A bare socket speaking the wire protocol through the project's codec, for protocol-level tests. */
public final class WireClient implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int nextId = 1;

    public WireClient(int port) throws IOException {
        this(new Socket("127.0.0.1", port));
    }

    /** Over a socket the caller opened, e.g. a TLS one. */
    WireClient(Socket connected) throws IOException {
        socket = connected;
        socket.setSoTimeout(10_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    int nextRequestId() {
        return nextId++;
    }

    void send(WireMessage message, Compressor compressor) throws IOException {
        sendRaw(WireCodec.encodeToBytes(new Outbound(message, compressor)));
    }

    void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    public OpMsg command(BsonDocument body) throws IOException {
        send(OpMsg.request(nextRequestId(), body), null);
        return (OpMsg) receive().message();
    }

    Inbound receive() throws IOException {
        byte[] head = new byte[4];
        in.readFully(head);
        int length = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt();
        byte[] whole = new byte[length];
        System.arraycopy(head, 0, whole, 0, 4);
        in.readFully(whole, 4, length - 4);
        return WireCodec.decode(whole, 64 * 1024 * 1024);
    }

    /** True when the proxy closed the connection (end of stream or reset) within the socket timeout. */
    boolean closedByPeer() {
        try {
            while (true) {
                receive();
            }
        } catch (EOFException e) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /** Logs this connection in with SCRAM-SHA-256 (as {@code user} of {@code admin}), as a driver would but without sessions. */
    WireClient login(String user, String password) throws IOException {
        ScramTestClient scram = new ScramTestClient(user, password, "wire-client-" + System.nanoTime());
        BsonDocument first = command(new BsonDocument("saslStart", new org.bson.BsonInt32(1))
                        .append("mechanism", new org.bson.BsonString("SCRAM-SHA-256"))
                        .append("payload", new org.bson.BsonBinary(scram.clientFirst()))
                        .append("options", new BsonDocument("skipEmptyExchange", org.bson.BsonBoolean.TRUE))
                        .append("$db", new org.bson.BsonString("admin")))
                .body();
        BsonDocument last = command(new BsonDocument("saslContinue", new org.bson.BsonInt32(1))
                        .append("conversationId", first.get("conversationId"))
                        .append(
                                "payload",
                                new org.bson.BsonBinary(scram.clientFinal(
                                        first.getBinary("payload").getData())))
                        .append("$db", new org.bson.BsonString("admin")))
                .body();
        if (!last.getBoolean("done", org.bson.BsonBoolean.FALSE).getValue()) {
            throw new IOException("login of " + user + " failed: " + last.toJson());
        }
        return this;
    }

    /** Sends nothing more: the proxy reads the end of the stream. */
    void halfClose() throws IOException {
        socket.shutdownOutput();
    }

    /** Drops the connection with a reset, as a client that crashes mid-message. */
    void reset() throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    void timeout(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
