package io.thermocline.proxy.server;

import io.thermocline.proxy.gateway.Backends;
import io.thermocline.proxy.gateway.TierBackend;
import io.thermocline.proxy.http.Readiness;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Whether this proxy replica should take clients ({@code /health/ready}, the operator's ProxyReady condition), and why
 * not: draining, refusing writes, no archive primary (unless the fast tier still serves the hot data), a fast tier
 * never seen with a primary, or a tier refusing the proxy's login.
 */
final class ProxyReadiness {

    private ProxyReadiness() {}

    /** {@code tiered}: whether the proxy routes tiered namespaces (then a fast tier alone keeps it ready, degraded). */
    static Readiness of(boolean draining, WriteRefusals writeRefusals, Backends backends, boolean tiered) {
        if (draining) {
            return new Readiness(false, "shutting down");
        }
        Optional<String> refusing = writeRefusals.current();
        if (refusing.isPresent()) {
            return new Readiness(false, "writes refused: " + refusing.get());
        }
        if (backends.archive().monitor().topology().primary() == null) {
            if (tiered
                    && backends.fast() != null
                    && backends.fast().monitor().topology().primary() != null) {
                // taking every replica out of service would stop the hot data too: stay ready, and say it
                // (docs/faults.md)
                return new Readiness(
                        true,
                        "degraded: no primary known for the archive tier; serving what the fast tier proves, "
                                + "refusing the rest retryably");
            }
            // the members' errors are the cause a person acts on (a rejected certificate, a refused connection);
            // the operator carries this text into its ProxyReady condition
            return new Readiness(
                    false,
                    "no primary known for the archive tier ("
                            + backends.archive().monitor().describeProblems() + ")");
        }
        String degraded = "";
        if (backends.fast() != null && backends.fast().monitor().topology().primary() == null) {
            String problems = "no primary known for the fast tier ("
                    + backends.fast().monitor().describeProblems() + ")";
            if (!backends.fast().monitor().primarySeen()) {
                return new Readiness(false, problems);
            }
            // an election, or a fast tier down after it served: every replica sees it at once, and taking them all out
            // would empty the Service and refuse every connection (issue 42 item 3). The archive still answers what
            // needs no fast tier; the rest gets retryable errors, which drivers ride out across an election
            degraded = "degraded: " + problems + "; commands that need it get retryable errors until it has one";
        }
        // wrong credentials in a tier URI: every client login (archive users) and every pooled connection fails, so
        // not ready
        for (TierBackend tier :
                backends.fast() == null ? List.of(backends.archive()) : List.of(backends.archive(), backends.fast())) {
            tier.probeLogin(Duration.ofSeconds(2));
            Optional<String> refused = tier.login().refusal();
            if (refused.isPresent()) {
                return new Readiness(
                        false, "the " + tier.tier().label() + " tier refused the proxy's login: " + refused.get());
            }
            if (!tier.login().succeeded()) {
                return new Readiness(
                        false,
                        "the proxy has not logged in to the " + tier.tier().label() + " tier yet");
            }
        }
        return new Readiness(true, degraded);
    }
}
