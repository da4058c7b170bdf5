package io.thermocline.proxy.chaos;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP relay between clients and proxy replicas that loses replies the way a network does: armed with a
 * byte pattern, it forwards the next client message containing it, reads and discards the reply (so the
 * command has run), then closes every connection it relays and refuses new ones (accepts and closes them)
 * for a while, and from then on relays to the next target. A driver's retry of that command therefore
 * reaches another proxy replica after the refusal, with the first attempt's reply lost. Messages are
 * relayed whole (wire frames), one connection to a target per client connection.
 */
public final class DroppingRelay implements AutoCloseable {

    private final ServerSocket listener;
    private final java.util.concurrent.atomic.AtomicIntegerArray targets;
    private final AtomicInteger target = new AtomicInteger();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicReference<Armed> armed = new AtomicReference<>();
    private final AtomicLong refusingUntil = new AtomicLong();
    private final AtomicInteger drops = new AtomicInteger();
    private final Thread acceptor;

    /** One armed drop: what to look for, how long to refuse, and a latch counted down once the reply is dropped. */
    private record Armed(byte[] pattern, Duration refuse, CountDownLatch dropped) {
    }

    public DroppingRelay(List<Integer> targetPorts) throws IOException {
        this.targets = new java.util.concurrent.atomic.AtomicIntegerArray(targetPorts.stream().mapToInt(Integer::intValue).toArray());
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "dropping-relay");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    public String uri(String options) {
        return "mongodb://127.0.0.1:" + port() + "/?" + options;
    }

    /** A target restarted on another port: new connections to it go there. */
    public void retarget(int index, int port) {
        targets.set(index, port);
    }

    /** Replies dropped so far. */
    public int drops() {
        return drops.get();
    }

    /**
     * Arms one drop: the next client message containing {@code pattern} (ASCII) is forwarded, its reply dropped,
     * and connections refused for {@code refuse}. The latch opens once the reply was read and dropped.
     */
    public CountDownLatch dropReplyTo(String pattern, Duration refuse) {
        Armed a = new Armed(pattern.getBytes(StandardCharsets.US_ASCII), refuse, new CountDownLatch(1));
        armed.set(a);
        return a.dropped();
    }

    /** One relayed connection; {@code dropping} is set upstream when the armed message passes, and acted on downstream. */
    private static final class Link {
        final Socket client;
        final Socket server;
        volatile Armed dropping;

        Link(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (System.nanoTime() < refusingUntil.get()) {
                    client.close();
                    continue;
                }
                Socket server;
                try {
                    server = new Socket(InetAddress.getLoopbackAddress(), targets.get(Math.floorMod(target.get(), targets.length())));
                } catch (IOException down) {
                    client.close(); // the target is down (restarting): the client sees its connection fail
                    continue;
                }
                open.add(client);
                open.add(server);
                Link link = new Link(client, server);
                Thread up = new Thread(() -> up(link), "relay-up");
                Thread down = new Thread(() -> down(link), "relay-down");
                up.setDaemon(true);
                down.setDaemon(true);
                up.start();
                down.start();
            } catch (IOException e) {
                if (listener.isClosed()) {
                    return;
                }
            }
        }
    }

    /** Client to proxy, whole messages; the armed message is marked on its link before it is forwarded. */
    private void up(Link link) {
        try {
            DataInputStream in = new DataInputStream(link.client.getInputStream());
            OutputStream out = link.server.getOutputStream();
            while (true) {
                byte[] message = readMessage(in);
                Armed a = armed.get();
                if (a != null && contains(message, a.pattern()) && armed.compareAndSet(a, null)) {
                    link.dropping = a;
                }
                out.write(message);
                out.flush();
            }
        } catch (IOException e) {
            quietly(link.client);
            quietly(link.server);
        }
    }

    /** Proxy to client; the reply to the armed message is read (the command ran) and dropped, and the outage begins. */
    private void down(Link link) {
        try {
            DataInputStream in = new DataInputStream(link.server.getInputStream());
            OutputStream out = link.client.getOutputStream();
            while (true) {
                byte[] message = readMessage(in);
                Armed a = link.dropping;
                if (a != null) {
                    drops.incrementAndGet();
                    refusingUntil.set(System.nanoTime() + a.refuse().toNanos());
                    target.incrementAndGet();
                    closeAll();
                    a.dropped().countDown();
                    return;
                }
                out.write(message);
                out.flush();
            }
        } catch (IOException e) {
            quietly(link.client);
            quietly(link.server);
        }
    }

    private static byte[] readMessage(DataInputStream in) throws IOException {
        byte[] head = new byte[4];
        in.readFully(head);
        int length = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (length < 16 || length > 64 * 1024 * 1024) {
            throw new IOException("not a wire message: length " + length);
        }
        byte[] whole = new byte[length];
        System.arraycopy(head, 0, whole, 0, 4);
        in.readFully(whole, 4, length - 4);
        return whole;
    }

    private static boolean contains(byte[] message, byte[] pattern) {
        outer:
        for (int i = 0; i + pattern.length <= message.length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (message[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private void closeAll() {
        for (Socket s : open) {
            quietly(s);
        }
        open.clear();
    }

    private static void quietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing is all we want
        }
    }

    /** Ends the refusal of the last drop now: a test arms a long one and ends it once its racing step is done. */
    public void endRefusal() {
        refusingUntil.set(System.nanoTime());
    }

    /** Waits until the refusal window of the last drop has passed. */
    public void awaitAccepting() throws InterruptedException {
        long left = refusingUntil.get() - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        closeAll();
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
