package io.thermocline.operator.fakes;

import io.quarkus.test.Mock;
import io.thermocline.operator.proxy.ProxyHealth;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Proxy pods' /health/ready as tests set it, by pod IP; a pod without an answer does not answer. */
@Mock
@ApplicationScoped
public class FakeProxyHealth implements ProxyHealth {

    private final Map<String, String> answers = new ConcurrentHashMap<>();
    private final List<String> asked = new CopyOnWriteArrayList<>();

    public void reset() {
        answers.clear();
        asked.clear();
    }

    /** The pod at {@code ip} answers 503 with {@code text}. */
    public void notReady(String ip, String text) {
        answers.put(ip, text);
    }

    /** Every host asked, in order. */
    public List<String> asked() {
        return List.copyOf(asked);
    }

    @Override
    public Optional<String> notReady(String host, int port) {
        asked.add(host);
        return Optional.ofNullable(answers.get(host));
    }
}
