package io.thermocline.proxy.server;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's network transport ({@code proxy.transport}). {@code auto} takes io_uring where the
 * kernel allows it (sends and receives of many connections go to the kernel in one system call
 * per event-loop turn; measured in docs/benchmarks/proxy-ycsb.md), then native epoll, then NIO.
 * Containers whose seccomp profile blocks io_uring fall back by themselves.
 */
record NettyTransport(String name, IoHandlerFactory ioHandler, Class<? extends ServerChannel> serverChannel,
                      Class<? extends SocketChannel> socketChannel) {
    private static final Logger LOG = LoggerFactory.getLogger(NettyTransport.class);

    static NettyTransport choose(String wanted) {
        boolean any = wanted == null || wanted.equals("auto");
        if (any || wanted.equals("io_uring")) {
            if (IoUring.isAvailable()) {
                return new NettyTransport("io_uring", IoUringIoHandler.newFactory(), IoUringServerSocketChannel.class,
                        IoUringSocketChannel.class);
            }
            unavailable("io_uring", IoUring.unavailabilityCause(), any);
        }
        if (any || wanted.equals("io_uring") || wanted.equals("epoll")) {
            if (Epoll.isAvailable()) {
                return new NettyTransport("epoll", EpollIoHandler.newFactory(), EpollServerSocketChannel.class, EpollSocketChannel.class);
            }
            unavailable("epoll", Epoll.unavailabilityCause(), any);
        }
        return new NettyTransport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class, NioSocketChannel.class);
    }

    private static void unavailable(String name, Throwable cause, boolean quietly) {
        String why = cause == null ? "unknown" : String.valueOf(cause.getMessage());
        if (quietly) {
            LOG.debug("event=transport_unavailable transport={} cause=\"{}\"", name, why);
        } else {
            LOG.warn("event=transport_unavailable transport={} cause=\"{}\" action=\"falling back; set proxy.transport: auto to silence\"",
                    name, why);
        }
    }
}
