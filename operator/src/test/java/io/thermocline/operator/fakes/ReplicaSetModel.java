package io.thermocline.operator.fakes;

import io.thermocline.operator.archive.VersionPolicy;
import io.thermocline.operator.credentials.FastTierUser;
import io.thermocline.operator.fasttier.MemberView;
import io.thermocline.operator.fasttier.MemberView.Role;
import io.thermocline.operator.fasttier.ReplicaSetClient;
import io.thermocline.operator.fasttier.ReplicaSetClient.Unavailable;
import io.thermocline.operator.fasttier.ReplicaSetConfig;
import io.thermocline.operator.fasttier.ReplicaSetConnector;
import io.thermocline.operator.fasttier.ReplicaSetTarget;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A replica set as its members would answer: which pods run, which members hold data, who is
 * primary, the configuration, the binaries' versions and the featureCompatibilityVersion. It
 * answers the operator's commands the way MongoDB does (refusing what MongoDB refuses) and
 * records every step that would lose a vote, the majority or data in {@link #violations()}: a
 * pod removed while its member is configured, a primary stopped without a step-down, a second
 * initiation, a binary started on an FCV it cannot run, an FCV set before every member runs it.
 */
public final class ReplicaSetModel implements ReplicaSetConnector {

    private static final class Member {
        boolean pod;
        boolean data;
        boolean crashed;
        String version;
        /** Answers left in STARTUP (no set name yet) after a restart, as a mongod loading its config. */
        int starting;
        /** In the set and answering, but not readable: RECOVERING (too stale, a rollback, maintenance). */
        boolean recovering;
        /** Answers left in an initial sync (STARTUP2) after being added. */
        int syncing;
    }

    private final Map<String, Member> members = new LinkedHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<String> commands = new CopyOnWriteArrayList<>();
    private final Set<String> users = new HashSet<>();
    private final Map<String, FastTierUser> grants = new HashMap<>();
    private ReplicaSetConfig config;
    private String primary;
    private String fcv;
    private boolean podsFollowTargets = true;
    private int startupAnswers;
    private int initialSyncAnswers;
    private final Set<String> pending = new HashSet<>();

    // ---- what Kubernetes does to the pods (driven by a test, or by the targets when nothing drives it)

    /** From now on only {@link #podsRunning}, {@link #restarted} and {@link #podGone} move pods. */
    public synchronized ReplicaSetModel podsDrivenByTest() {
        podsFollowTargets = false;
        return this;
    }

    /** From now on a restarted member answers {@code answers} times without a set name (STARTUP) before it recovers. */
    public synchronized ReplicaSetModel membersStartSlowly(int answers) {
        startupAnswers = answers;
        return this;
    }

    /** Pods of {@code hosts} run {@code version}; pods of other hosts are gone. */
    public synchronized void podsRunning(List<String> hosts, String version) {
        for (String host : List.copyOf(members.keySet())) {
            if (members.get(host).pod && !hosts.contains(host)) {
                podGone(host);
            }
        }
        for (String host : hosts) {
            if (pending.contains(host)) {
                continue;
            }
            Member m = members.computeIfAbsent(host, h -> new Member());
            if (!m.pod) {
                m.pod = true;
                m.version = version;
                m.crashed = !canStart(version);
            }
        }
    }

    /** The StatefulSet removed the pod of {@code host} (scale-down). */
    public synchronized void podGone(String host) {
        Member m = members.get(host);
        if (m == null || !m.pod) {
            return;
        }
        if (config != null && config.contains(host)) {
            violations.add(
                    "the pod of " + host + " went away while " + host + " was still in the replica-set configuration");
        }
        m.pod = false;
        lost(host, "removed");
        electIfNeeded();
    }

    /** The pod of {@code host} is Pending (no node fits it): no mongod answers there until {@link #scheduled}. */
    public synchronized void pending(String host) {
        pending.add(host);
        Member m = members.get(host);
        if (m != null) {
            m.pod = false;
        }
    }

    public synchronized void scheduled(String host) {
        pending.remove(host);
    }

    /** The member goes RECOVERING (answers, votes, but is neither primary nor secondary) until {@link #recovered}. */
    public synchronized void recovering(String host) {
        members.get(host).recovering = true;
        if (host.equals(primary)) {
            primary = null;
        }
        electIfNeeded();
    }

    public synchronized void recovered(String host) {
        members.get(host).recovering = false;
        electIfNeeded();
    }

    /** From now on a member added to the set stays in its initial sync (STARTUP2, newlyAdded) for {@code answers} answers. */
    public synchronized ReplicaSetModel initialSyncsTake(int answers) {
        initialSyncAnswers = answers;
        return this;
    }

    /** The member's mongod stops answering (its node is gone, a crash loop); pod and data stay. */
    public synchronized void down(String host) {
        members.get(host).crashed = true;
        if (host.equals(primary)) {
            primary = null;
        }
        electIfNeeded();
    }

    /** The member answers again. */
    public synchronized void up(String host) {
        members.get(host).crashed = false;
        electIfNeeded();
    }

    /** An election made {@code host} primary (e.g. after a priority change or a failover). */
    public synchronized void electPrimary(String host) {
        primary = host;
    }

    /** The pod of {@code host} was deleted and came back on {@code version} (a rolling restart). */
    public synchronized void restarted(String host, String version) {
        Member m = members.get(host);
        if (m == null) {
            return;
        }
        if (config != null && config.contains(host)) {
            long othersHealthy = config.hosts().stream()
                    .filter(h -> !h.equals(host))
                    .filter(this::healthy)
                    .count();
            if (othersHealthy < majority()) {
                violations.add("restarting " + host + " left " + othersHealthy + " of "
                        + config.members().size() + " members: the majority was lost");
            }
        }
        lost(host, "restarted");
        m.starting = startupAnswers;
        m.version = version;
        m.crashed = !canStart(version);
        if (m.crashed) {
            violations.add(host + " cannot start: mongod " + version + " with featureCompatibilityVersion " + fcv);
        }
        electIfNeeded();
    }

    /** The volume of {@code host} is replaced by an empty one. */
    public synchronized void loseData(String host) {
        Member m = members.get(host);
        m.data = false;
        lost(host, "lost its data");
        electIfNeeded();
    }

    // ---- what a test reads

    public List<String> violations() {
        return violations;
    }

    public List<String> commands() {
        return commands;
    }

    public synchronized List<String> configured() {
        return config == null ? List.of() : config.hosts();
    }

    public synchronized String primary() {
        return primary;
    }

    public synchronized String featureCompatibilityVersion() {
        return fcv;
    }

    public synchronized String version(String host) {
        return members.get(host).version;
    }

    public synchronized boolean hasUser(String user) {
        return users.contains(user);
    }

    /** The user as the operator last ensured it (roles, custom privileges); null when never. */
    public synchronized FastTierUser user(String user) {
        return grants.get(user);
    }

    public synchronized int healthyMembers() {
        return (int) members.keySet().stream().filter(this::healthy).count();
    }

    public synchronized boolean healthy(String host) {
        Member m = members.get(host);
        return answering(host) && !members.get(host).recovering && members.get(host).syncing == 0;
    }

    /** Up with its data and config, whatever its state: what answers heartbeats (and MongoDB's reconfig quorum check). */
    private boolean answering(String host) {
        Member m = members.get(host);
        return m != null && m.pod && !m.crashed && m.data && m.starting == 0 && config != null && config.contains(host);
    }

    /** Sets up an already initiated replica set (e.g. data kept from before). */
    public synchronized void existing(List<String> hosts, String version) {
        podsRunning(hosts, version);
        List<ReplicaSetConfig.Member> configured = new ArrayList<>();
        for (int i = 0; i < hosts.size(); i++) {
            members.get(hosts.get(i)).data = true;
            configured.add(new ReplicaSetConfig.Member(i, hosts.get(i), false));
        }
        config = new ReplicaSetConfig(1, configured);
        primary = hosts.get(0);
        fcv = VersionPolicy.series(version);
    }

    @Override
    public ReplicaSetClient connect(ReplicaSetTarget target) {
        synchronized (this) {
            if (podsFollowTargets) {
                podsRunning(target.podHosts(), target.version());
            }
        }
        return new Client();
    }

    private final class Client implements ReplicaSetClient {

        @Override
        public MemberView member(String host) {
            synchronized (ReplicaSetModel.this) {
                Member m = members.get(host);
                if (m == null || !m.pod || m.crashed) {
                    return MemberView.unreachable(host);
                }
                if (!m.data || m.starting > 0) {
                    if (m.starting > 0) {
                        m.starting--;
                    }
                    return new MemberView(host, Role.UNINITIATED, m.version, List.of());
                }
                if (m.syncing > 0) {
                    if (--m.syncing == 0) { // the initial sync ends: the member votes from now on
                        config = new ReplicaSetConfig(
                                config.version(),
                                config.members().stream()
                                        .map(c -> c.host().equals(host)
                                                ? new ReplicaSetConfig.Member(c.id(), c.host(), false)
                                                : c)
                                        .toList());
                        electIfNeeded();
                    }
                    return new MemberView(host, Role.OTHER, m.version, config.hosts());
                }
                if (m.recovering) {
                    return new MemberView(host, Role.OTHER, m.version, config.hosts());
                }
                Role role = host.equals(primary)
                        ? Role.PRIMARY
                        : config != null && config.contains(host) ? Role.SECONDARY : Role.OTHER;
                return new MemberView(host, role, m.version, config == null ? List.of() : config.hosts());
            }
        }

        @Override
        public void initiate(String host, String replicaSetName) {
            synchronized (ReplicaSetModel.this) {
                commands.add("initiate " + host);
                if (members.values().stream().anyMatch(m -> m.data) || config != null) {
                    violations.add("replSetInitiate on " + host
                            + " while the replica set exists: a second, empty replica set");
                }
                Member m = members.get(host);
                m.data = true;
                config = new ReplicaSetConfig(1, List.of(new ReplicaSetConfig.Member(0, host, false)));
                primary = host;
                fcv = VersionPolicy.series(m.version);
            }
        }

        @Override
        public ReplicaSetConfig config() {
            synchronized (ReplicaSetModel.this) {
                requirePrimary();
                return config;
            }
        }

        @Override
        public void reconfigure(ReplicaSetConfig next) {
            synchronized (ReplicaSetModel.this) {
                requirePrimary();
                commands.add("reconfig " + next.hosts());
                if (next.version() != config.version() + 1) {
                    throw new Unavailable("replSetReconfig: version must be " + (config.version() + 1), null);
                }
                Set<String> changed = new HashSet<>(config.hosts());
                changed.addAll(next.hosts());
                changed.removeIf(h -> config.contains(h) && next.contains(h));
                if (changed.size() > 1) {
                    throw new Unavailable(
                            "replSetReconfig: only one voting member may be added or removed at a time", null);
                }
                if (!next.contains(primary)) {
                    throw new Unavailable(
                            "replSetReconfig: the primary cannot remove itself; step it down first", null);
                }
                // MongoDB's quorum check: a majority of the new configuration's voting members must answer
                List<String> voters = next.members().stream()
                        .filter(m -> !m.newlyAdded())
                        .map(ReplicaSetConfig.Member::host)
                        .toList();
                long answering =
                        voters.stream().filter(ReplicaSetModel.this::answering).count();
                if (answering < voters.size() / 2 + 1) {
                    violations.add(
                            "replSetReconfig to " + next.hosts() + " with " + answering + " of " + voters.size()
                                    + " voting members healthy: MongoDB refuses it (quorum check), and the set could not keep a primary");
                    throw new Unavailable(
                            "replSetReconfig: Quorum check failed because not enough voting nodes responded", null);
                }
                for (String added : next.hosts()) {
                    if (!config.contains(added)) {
                        Member m = members.get(added);
                        if (m == null || !m.pod || m.crashed) {
                            throw new Unavailable("replSetReconfig: " + added + " is unreachable", null);
                        }
                        m.data = true; // its initial sync: instant, or initialSyncsTake(n) answers in STARTUP2
                        m.syncing = initialSyncAnswers;
                    }
                }
                // a member stays newlyAdded (no vote) while it syncs, as MongoDB 4.4+ marks it
                config = new ReplicaSetConfig(
                        next.version(),
                        next.members().stream()
                                .map(m -> new ReplicaSetConfig.Member(
                                        m.id(), m.host(), members.get(m.host()).syncing > 0))
                                .toList());
            }
        }

        @Override
        public Map<String, String> memberStates() {
            synchronized (ReplicaSetModel.this) {
                requirePrimary();
                Map<String, String> states = new HashMap<>();
                for (String host : config.hosts()) {
                    Member m = members.get(host);
                    states.put(
                            host,
                            m == null || !m.pod || m.crashed
                                    ? "(not reachable/healthy)"
                                    : m.starting > 0
                                            ? "STARTUP"
                                            : !m.data || m.syncing > 0
                                                    ? "STARTUP2"
                                                    : m.recovering
                                                            ? "RECOVERING"
                                                            : host.equals(primary) ? "PRIMARY" : "SECONDARY");
                }
                return states;
            }
        }

        @Override
        public void stepDown() {
            synchronized (ReplicaSetModel.this) {
                requirePrimary();
                commands.add("stepDown " + primary);
                String next = config.hosts().stream()
                        .filter(h -> !h.equals(primary))
                        .filter(ReplicaSetModel.this::healthy)
                        .findFirst()
                        .orElseThrow(() -> new Unavailable("replSetStepDown: no electable secondary", null));
                primary = next;
            }
        }

        @Override
        public String featureCompatibilityVersion() {
            synchronized (ReplicaSetModel.this) {
                requirePrimary();
                return fcv;
            }
        }

        @Override
        public void setFeatureCompatibilityVersion(String majorMinor) {
            synchronized (ReplicaSetModel.this) {
                requirePrimary();
                commands.add("setFCV " + majorMinor);
                for (String host : config.hosts()) {
                    if (!majorMinor.equals(VersionPolicy.series(members.get(host).version))) {
                        violations.add("setFeatureCompatibilityVersion " + majorMinor + " while " + host + " runs "
                                + members.get(host).version);
                        throw new Unavailable(
                                "setFeatureCompatibilityVersion: not every member runs " + majorMinor, null);
                    }
                }
                fcv = majorMinor;
            }
        }

        @Override
        public void ensureUser(FastTierUser user) {
            synchronized (ReplicaSetModel.this) {
                requirePrimary();
                users.add(user.name());
                grants.put(user.name(), user);
            }
        }

        @Override
        public void close() {}
    }

    private void requirePrimary() {
        if (primary == null) {
            throw new Unavailable("no primary", null);
        }
    }

    /** A binary starts on data whose FCV is its own series or the one before. */
    private boolean canStart(String version) {
        if (fcv == null) {
            return true;
        }
        String series = VersionPolicy.series(version);
        return VersionPolicy.compareSeries(series, fcv) >= 0 && VersionPolicy.withinOneUpgrade(fcv, series);
    }

    private int majority() {
        return config.members().size() / 2 + 1;
    }

    private void lost(String host, String how) {
        if (host.equals(primary)) {
            if (config != null && config.members().size() > 1 && !"lost its data".equals(how)) {
                violations.add("primary " + host + " " + how + " without stepping down first");
            }
            primary = null;
        }
    }

    private void electIfNeeded() {
        if (primary != null || config == null) {
            return;
        }
        List<String> healthy = config.hosts().stream().filter(this::healthy).toList();
        if (healthy.size() >= majority()) {
            primary = healthy.get(0);
        }
    }
}
