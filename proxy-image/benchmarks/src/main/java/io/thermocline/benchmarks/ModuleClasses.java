package io.thermocline.benchmarks;

import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.feeder.Feeder;
import java.util.List;

/**
 * Refuses to measure stale code: the product's classes must come from this checkout's modules, not
 * from a shaded {@code thermocline.jar} (which can hold an earlier build's classes; see the benchmarks
 * pom). Child processes get the same classpath, in the same order.
 */
public final class ModuleClasses {

    private ModuleClasses() {
    }

    public static void require() {
        for (Class<?> c : List.of(ProxyServer.class, Feeder.class, EmbeddedReplicaSet.class)) {
            String where = String.valueOf(c.getProtectionDomain().getCodeSource().getLocation());
            if (where.endsWith("thermocline.jar")) {
                throw new IllegalStateException(c.getName() + " was loaded from the shaded " + where + ", which may hold an"
                        + " earlier build's classes: put the modules before thermocline-app in proxy-image/benchmarks/pom.xml");
            }
            System.out.println("benchmark: " + c.getSimpleName() + " from " + where);
        }
    }
}
