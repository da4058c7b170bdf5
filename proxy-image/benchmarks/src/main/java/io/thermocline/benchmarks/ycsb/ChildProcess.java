package io.thermocline.benchmarks.ycsb;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A server of the benchmark (the MongoDB wire server, the proxy, a relay) in a process of its
 * own, as each runs in production: a JVM's collector, JIT and CPU time are its own, and its CPU
 * can be read from the operating system.
 */
public final class ChildProcess implements AutoCloseable {
    private final Process process;

    private ChildProcess(Process process) {
        this.process = process;
    }

    /** Starts {@code mainClass} on this JVM's classpath and waits until it accepts connections on {@code port}. */
    public static ChildProcess java(String name, List<String> jvmOptions, String mainClass, List<String> args, int port, Path log)
            throws IOException, InterruptedException {
        return start(name, javaCommand(jvmOptions, mainClass, args), port, log);
    }

    /** The command line that runs {@code mainClass} on this JVM's classpath. */
    public static List<String> javaCommand(List<String> jvmOptions, String mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        return command;
    }

    /** Starts {@code command} and waits until it accepts connections on {@code port}. */
    public static ChildProcess start(String name, List<String> command, int port, Path log) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        ChildProcess child = new ChildProcess(p);
        Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException(name + " exited with " + p.exitValue() + "; see " + log);
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return child;
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        p.destroyForcibly();
        throw new IllegalStateException(name + " did not listen on port " + port + " within 60 s; see " + log);
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The process id (after an {@code exec}, the program's own). */
    public long pid() {
        return process.pid();
    }

    /** CPU time (user and system) the process has used so far. */
    public Duration cpu() {
        return process.toHandle().info().totalCpuDuration().orElse(Duration.ZERO);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
