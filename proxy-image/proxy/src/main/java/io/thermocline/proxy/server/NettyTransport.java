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

/** Native epoll on Linux (fewer system calls per request), NIO elsewhere. */
record NettyTransport(String name, IoHandlerFactory ioHandler, Class<? extends ServerChannel> serverChannel,
                      Class<? extends SocketChannel> socketChannel) {

    static NettyTransport best() {
        String wanted = System.getProperty("thermocline.transport", "");
        if (wanted.equals("io_uring") && IoUring.isAvailable()) {
            return new NettyTransport("io_uring", IoUringIoHandler.newFactory(), IoUringServerSocketChannel.class, IoUringSocketChannel.class);
        }
        if (!wanted.equals("nio") && Epoll.isAvailable()) {
            return new NettyTransport("epoll", EpollIoHandler.newFactory(), EpollServerSocketChannel.class, EpollSocketChannel.class);
        }
        return new NettyTransport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class, NioSocketChannel.class);
    }
}
