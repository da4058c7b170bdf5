package io.thermocline.benchmarks.ycsb;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;

/**
 * The floor under any proxy on this machine: a byte relay that copies each client connection
 * to its own server connection without reading a single message, on the proxy's Netty
 * transport. What it costs is what two extra loopback hops cost, with no protocol work at all.
 * {@code ByteRelayMain <listenPort> <serverPort>}.
 */
public final class ByteRelayMain {
    private ByteRelayMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        int listen = Integer.parseInt(args[0]);
        int server = Integer.parseInt(args[1]);
        boolean uring = IoUring.isAvailable();
        var group = new MultiThreadIoEventLoopGroup(2, uring ? IoUringIoHandler.newFactory() : EpollIoHandler.newFactory());
        Class<? extends SocketChannel> socket = uring ? IoUringSocketChannel.class : EpollSocketChannel.class;
        new ServerBootstrap().group(group).channel(uring ? IoUringServerSocketChannel.class : EpollServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel client) {
                        new Bootstrap().group(client.eventLoop()).channel(socket).option(ChannelOption.TCP_NODELAY, true)
                                .handler(new Relay(client))
                                .connect("127.0.0.1", server).addListener((ChannelFutureListener) f -> {
                                    if (!f.isSuccess()) {
                                        client.close();
                                        return;
                                    }
                                    client.pipeline().addLast(new Relay(f.channel()));
                                    client.config().setAutoRead(true);
                                });
                    }
                }).bind("127.0.0.1", listen).sync().channel().closeFuture().sync();
    }

    /** Writes whatever one side reads to the other side. */
    private static final class Relay extends ChannelInboundHandlerAdapter {
        private final Channel to;

        Relay(Channel to) {
            this.to = to;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            to.writeAndFlush(msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            to.close();
        }
    }
}
