package io.thermocline.proxy.auth;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.security.authentication.AuthEvents;

import java.util.Set;

/**
 * Authentication and authorization counters on the proxy's /metrics. Labels come from fixed sets
 * (mechanisms, {@link ProxyMetrics#commandLabel}), so a client cannot grow them; no user name is a label.
 */
public final class AuthMetrics implements AuthEvents {
    private static final Set<String> MECHANISMS = Set.of("SCRAM-SHA-256", "SCRAM-SHA-1", "MONGODB-X509");

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter logins = Counter.builder().withoutExemplars().name("thermocline_proxy_logins_total")
            .help("Client login attempts by mechanism and outcome (success, failure)").labelNames("mechanism", "outcome")
            .register(registry);
    private final Counter throttled = Counter.builder().withoutExemplars().name("thermocline_proxy_login_attempts_throttled_total")
            .help("Login attempts delayed because their source address failed before (auth.failedLoginDelay)").register(registry);
    private final Counter unauthorized = Counter.builder().withoutExemplars().name("thermocline_proxy_authorization_failures_total")
            .help("Commands refused with 13 Unauthorized, by command and reason (unauthenticated, privilege)")
            .labelNames("command", "reason").register(registry);

    public PrometheusRegistry registry() {
        return registry;
    }

    @Override
    public void login(String mechanism, boolean succeeded) {
        logins.labelValues(MECHANISMS.contains(mechanism) ? mechanism : "other", succeeded ? "success" : "failure").inc();
    }

    @Override
    public void throttled() {
        throttled.inc();
    }

    @Override
    public void unauthorized(String command, boolean authenticated) {
        unauthorized.labelValues(ProxyMetrics.commandLabel(command), authenticated ? "privilege" : "unauthenticated").inc();
    }
}
