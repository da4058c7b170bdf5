package io.thermocline.tiering.metadata;

import java.time.Instant;
import java.util.Map;

/** One consistent read of the shared state: every namespace's state and the feeder's checkpoint. */
public record TieringSnapshot(Map<String, NamespaceState> namespaces, FeederCheckpoint feeder, Instant readAt) {

    public TieringSnapshot {
        namespaces = Map.copyOf(namespaces);
    }

    public NamespaceState namespace(String namespace) {
        return namespaces.getOrDefault(namespace, NamespaceState.initial(namespace));
    }
}
