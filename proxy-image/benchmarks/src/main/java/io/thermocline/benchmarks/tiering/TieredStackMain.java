package io.thermocline.benchmarks.tiering;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.storage.Storage;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.warmer.Warmer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Thermocline in front of an archive that runs elsewhere: a fast tier (embedded replica set in
 * memory, uncapped), the feeder, the evictor, optionally the warmer, and the proxy, in one process
 * as the embedded default runs them. {@code TieredStackMain <proxyPort> <httpPort> <archiveUri> <warmer:true|false> <fastTierPort> [THERMOCLINE_X=value ...]}:
 * the trailing settings go through the same loader as the {@code thermocline} commands' environment.
 */
public final class TieredStackMain {
    private TieredStackMain() {
    }

    public static void main(String[] args) throws Exception {
        EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder().name("fast").members(1).storage(Storage.memory())
                .ports(List.of(Integer.parseInt(args[4]))).oplogSize(Integer.parseInt(args[5])).build().start();
        Map<String, String> env = new HashMap<>();
        env.put("THERMOCLINE_PROXY_LISTEN_HOST", "127.0.0.1");
        env.put("THERMOCLINE_PROXY_PORT", args[0]);
        env.put("THERMOCLINE_PROXY_HTTP_HOST", "127.0.0.1");
        env.put("THERMOCLINE_PROXY_HTTP_PORT", args[1]);
        env.put("THERMOCLINE_FLEET_INSTANCE_ID", "bench");
        env.put("THERMOCLINE_TIERS_FAST_URI", fast.connectionString());
        env.put("THERMOCLINE_TIERS_ARCHIVE_URI", args[2]);
        boolean warmer = Boolean.parseBoolean(args[3]);
        for (int i = 6; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            env.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        env.putIfAbsent("THERMOCLINE_AUTH_MODE", "disabled"); // YCSB connects without credentials
        ThermoclineConfig config = ConfigLoader.fromEnvironment(env);
        List<AutoCloseable> started = new ArrayList<>();
        started.add(fast);
        PrometheusRegistry workerMetrics = new PrometheusRegistry();
        Feeder feeder = Feeder.start(config, Feeder.Options.defaults().withRegistry(workerMetrics));
        started.add(feeder);
        if (!feeder.awaitStreaming(Duration.ofSeconds(60))) {
            throw new IllegalStateException("the feeder did not stream within 60 s", feeder.crash());
        }
        if (warmer) {
            started.add(Warmer.start(config, Warmer.Options.defaults().withRegistry(workerMetrics)));
        }
        started.add(Evictor.start(config, Evictor.Options.defaults().withRegistry(workerMetrics)));
        ProxyServer proxy = ProxyServer.create(config).start();
        proxy.metrics().alsoExpose(workerMetrics);
        started.add(proxy);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (int i = started.size() - 1; i >= 0; i--) {
                try {
                    started.get(i).close();
                } catch (Exception e) {
                    System.err.println("stop: " + e);
                }
            }
        }));
        System.out.println("thermocline listening on 127.0.0.1:" + proxy.port() + ", fast tier " + fast.connectionString());
        Thread.currentThread().join();
    }
}
