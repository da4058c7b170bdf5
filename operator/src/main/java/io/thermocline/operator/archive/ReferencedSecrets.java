package io.thermocline.operator.archive;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * The user's Secrets that clusters name (archive connection string and CA, users file, certificates), one informer per
 * Secret by name ({@code fieldSelector=metadata.name}): the cache holds those Secrets and no other of the namespace, which
 * an informer on every Secret would (Helm releases, service-account tokens, other applications' credentials) in a pod of
 * 512 Mi. The user's Secrets carry no label of ours to select them by, and labelling them would fight whoever owns them.
 * A reconcile {@link #track tracks} what its cluster names; a Secret no cluster names any more is unwatched. A change to a
 * watched Secret reconciles each cluster naming it.
 */
public final class ReferencedSecrets extends AbstractEventSource<Secret, ThermoclineCluster>
        implements Cache<Secret>, ResourceEventAware<ThermoclineCluster> {

    private static final Logger LOG = Logger.getLogger(ReferencedSecrets.class);
    private static final Duration SYNC_WAIT = Duration.ofSeconds(10);

    /** One watched Secret: its informer and the clusters that name it. */
    private final class Watched implements ResourceEventHandler<Secret> {
        private final Set<ResourceID> clusters = ConcurrentHashMap.newKeySet();
        private volatile SharedIndexInformer<Secret> informer;

        @Override
        public void onAdd(Secret secret) {
            notifyClusters();
        }

        @Override
        public void onUpdate(Secret before, Secret after) {
            notifyClusters();
        }

        @Override
        public void onDelete(Secret secret, boolean deletedFinalStateUnknown) {
            notifyClusters();
        }

        private void notifyClusters() {
            // the initial list of an informer started by a reconcile is what that reconcile reads: nothing to tell
            if (informer != null && isRunning()) {
                clusters.forEach(cluster -> getEventHandler().handleEvent(new Event(cluster)));
            }
        }

        Optional<Secret> cached(ResourceID id) {
            SharedIndexInformer<Secret> running = informer;
            return running == null || !running.hasSynced() ? Optional.empty()
                    : Optional.ofNullable(running.getStore().getByKey(id.getNamespace().orElseThrow() + "/" + id.getName()));
        }

        boolean synced() {
            return informer != null && informer.hasSynced();
        }

        boolean stopped() {
            return informer == null || !informer.isRunning() && !informer.hasSynced();
        }
    }

    private final KubernetesClient client;
    private final Map<ResourceID, Watched> watched = new ConcurrentHashMap<>();
    private final Map<ResourceID, Set<ResourceID>> byCluster = new ConcurrentHashMap<>();

    public ReferencedSecrets(KubernetesClient client, String name) {
        super(Secret.class, name);
        this.client = client;
    }

    /** Watches exactly {@code secrets} for {@code cluster}: new ones are watched, those it no longer names are released. */
    public synchronized void track(ResourceID cluster, Set<ResourceID> secrets) {
        Set<ResourceID> before = byCluster.getOrDefault(cluster, Set.of());
        for (ResourceID secret : before) {
            Watched w = watched.get(secret);
            if (w != null && w.stopped()) {
                start(w, secret);
            }
        }
        if (before.equals(secrets)) {
            return;
        }
        for (ResourceID secret : secrets) {
            if (!before.contains(secret)) {
                watch(secret).clusters.add(cluster);
            }
        }
        before.stream().filter(secret -> !secrets.contains(secret)).forEach(secret -> release(secret, cluster));
        if (secrets.isEmpty()) {
            byCluster.remove(cluster);
        } else {
            byCluster.put(cluster, Set.copyOf(secrets));
        }
    }

    /** The cluster is gone: its Secrets are released. */
    public void forget(ResourceID cluster) {
        track(cluster, Set.of());
    }

    /** A Secret by name: from the cache once its informer has synced, else (not watched, or not yet) with a GET. */
    public Secret find(String namespace, String name) {
        ResourceID id = new ResourceID(name, namespace);
        Watched w = watched.get(id);
        if (w != null && w.synced()) {
            return w.cached(id).orElse(null);
        }
        return client.secrets().inNamespace(namespace).withName(name).get();
    }

    @Override
    public void onResourceDeleted(ThermoclineCluster cluster) {
        forget(ResourceID.fromResource(cluster));
    }

    @Override
    public Set<Secret> getSecondaryResources(ThermoclineCluster cluster) {
        return byCluster.getOrDefault(ResourceID.fromResource(cluster), Set.of()).stream().map(this::get)
                .flatMap(Optional::stream).collect(Collectors.toSet());
    }

    @Override
    public Optional<Secret> get(ResourceID id) {
        Watched w = watched.get(id);
        return w == null ? Optional.empty() : w.cached(id);
    }

    @Override
    public Stream<ResourceID> keys() {
        return list().map(ResourceID::fromResource);
    }

    @Override
    public Stream<Secret> list(Predicate<Secret> predicate) {
        Map<ResourceID, Watched> now = new HashMap<>(watched);
        return now.entrySet().stream().map(e -> e.getValue().cached(e.getKey())).flatMap(Optional::stream).filter(predicate);
    }

    @Override
    public synchronized void stop() {
        watched.values().forEach(w -> {
            if (w.informer != null) {
                w.informer.stop();
            }
        });
        watched.clear();
        byCluster.clear();
        super.stop();
    }

    private Watched watch(ResourceID secret) {
        Watched existing = watched.get(secret);
        if (existing != null) {
            return existing;
        }
        Watched w = new Watched();
        watched.put(secret, w);
        start(w, secret);
        return w;
    }

    private void start(Watched w, ResourceID secret) {
        String namespace = secret.getNamespace().orElseThrow();
        SharedIndexInformer<Secret> informer = client.secrets().inNamespace(namespace).withName(secret.getName()).runnableInformer(0);
        informer.addEventHandler(w);
        w.informer = informer;
        try {
            // bounded: an API server that does not answer leaves lookups to GETs until the informer syncs on its own
            informer.start().toCompletableFuture().get(SYNC_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LOG.warnf("event=secret-watch-slow secret=%s/%s", namespace, secret.getName());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | KubernetesClientException e) {
            // a watch that could not start (RBAC, API server): lookups GET, and the next reconcile tries again
            LOG.warnf("event=secret-watch-failed secret=%s/%s error=%s", namespace, secret.getName(), e.getClass().getSimpleName());
            informer.stop();
        }
    }

    private void release(ResourceID secret, ResourceID cluster) {
        Watched w = watched.get(secret);
        if (w == null) {
            return;
        }
        w.clusters.remove(cluster);
        if (w.clusters.isEmpty()) {
            watched.remove(secret);
            if (w.informer != null) {
                w.informer.stop();
            }
        }
    }
}
