package io.thermocline.operator.fasttier;

import io.thermocline.operator.archive.VersionPolicy;
import io.thermocline.operator.credentials.FastTierUser;
import io.thermocline.operator.fasttier.MemberView.Role;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Brings the fast-tier replica set one safe step closer to its target per call, in this
 * order: initiate (once ever), re-add a member that lost its data, add a member, remove a
 * member (stepping the primary down first if it is the one leaving; a removal only while the
 * configuration after it keeps a healthy voting majority), restart one member on
 * the current pod template (secondaries first, the primary after stepping down, only while
 * every member is healthy, so a majority always stays), raise the featureCompatibilityVersion
 * to what the spec asks once every member runs that series, and ensure the data plane's user. Each step is
 * decided from what the members answer now, so calling again at any point is safe.
 */
public final class ReplicaSetSteps {

    private static final Logger LOG = Logger.getLogger(ReplicaSetSteps.class);
    private final ReplicaSetConnector connector;

    public ReplicaSetSteps(ReplicaSetConnector connector) {
        this.connector = connector;
    }

    public ReplicaSetState next(ReplicaSetTarget target) {
        try (ReplicaSetClient rs = connector.connect(target)) {
            Map<String, MemberView> views = new LinkedHashMap<>();
            for (String host : target.podHosts()) {
                views.put(host, rs.member(host));
            }
            if (views.values().stream().noneMatch(v -> v.role().initiated())) {
                return initiate(rs, target, views);
            }
            Optional<MemberView> primary = views.values().stream()
                    .filter(v -> v.role() == Role.PRIMARY)
                    .findFirst();
            if (primary.isEmpty()) {
                List<String> known = views.values().stream()
                        .filter(v -> v.role().initiated())
                        .findFirst()
                        .map(MemberView::configHosts)
                        .orElse(List.of());
                return new ReplicaSetState.Converging(
                        "NoPrimary",
                        "no member is primary right now (an election is under way,"
                                + " or too few members are up to elect one)",
                        known);
            }
            return configure(rs, target, views, primary.get(), rs.config());
        } catch (ReplicaSetClient.Unavailable e) {
            return new ReplicaSetState.Converging(
                    "MembersUnreachable",
                    "cannot configure the fast tier yet (" + e.getMessage() + "); the operator retries");
        }
    }

    /** Lost its data: without a config, or syncing from scratch, while the primary's status says initial sync. */
    static boolean lostItsData(MemberView view, String primaryView) {
        return (view.role() == Role.UNINITIATED || view.role() == Role.OTHER) && "STARTUP2".equals(primaryView);
    }

    private static ReplicaSetState initiate(
            ReplicaSetClient rs, ReplicaSetTarget target, Map<String, MemberView> views) {
        if (target.initiated()) {
            return new ReplicaSetState.Converging(
                    "ReplicaSetMissing",
                    "status.replicaSetInitiated records that this replica"
                            + " set was initiated, but no running member holds its configuration; the operator never initiates twice"
                            + " (that would start a second, empty replica set under the same name). Check the members' volumes;"
                            + " if the fast-tier data is gone for good, remove status.replicaSetInitiated to start an empty one");
        }
        String first = target.members().get(0);
        List<String> silent = views.values().stream()
                .filter(v -> v.role() == Role.UNREACHABLE)
                .map(MemberView::host)
                .toList();
        if (!views.containsKey(first) || !silent.isEmpty()) {
            // an unanswering member could hold the replica set: initiating now could make a second one
            return new ReplicaSetState.Converging(
                    "MembersUnreachable",
                    "initiation waits until every member answers: " + (silent.isEmpty() ? List.of(first) : silent));
        }
        rs.initiate(first, target.replicaSetName());
        LOG.infof("event=replicaset-initiated replicaSet=%s", target.replicaSetName());
        return new ReplicaSetState.Converging(
                "Initiating", "replica set " + target.replicaSetName() + " initiated on " + first, List.of(first));
    }

    private static ReplicaSetState configure(
            ReplicaSetClient rs,
            ReplicaSetTarget target,
            Map<String, MemberView> views,
            MemberView primary,
            ReplicaSetConfig config) {
        List<String> configured = config.hosts();
        // a member answering without a set name is usually just starting (STARTUP: loading its config after a restart);
        // only an initial sync (STARTUP2) of a configured, not newly added member says its data is gone
        Map<String, String> states = config.members().stream()
                        .anyMatch(m -> views.containsKey(m.host())
                                && views.get(m.host()).role() != Role.PRIMARY
                                && views.get(m.host()).role() != Role.SECONDARY
                                && !m.newlyAdded())
                ? rs.memberStates()
                : Map.of();
        for (ReplicaSetConfig.Member m : config.members()) {
            MemberView view = views.get(m.host());
            if (view != null && lostItsData(view, states.get(m.host())) && !m.newlyAdded()) {
                ReplicaSetConfig next = config.removing(m.host());
                Optional<ReplicaSetState> noMajority =
                        withoutHealthyMajority(next, views, "re-adding " + m.host(), configured);
                if (noMajority.isPresent()) {
                    return noMajority.get();
                }
                rs.reconfigure(next);
                LOG.infof("event=replicaset-member-lost-data replicaSet=%s host=%s", target.replicaSetName(), m.host());
                return new ReplicaSetState.Converging(
                        "ReAddingMember",
                        "member " + m.host() + " answers without replica-set data"
                                + " (a lost volume?): removed, to be added back as a new member that votes only once its initial sync ends",
                        next.hosts());
            }
        }
        List<String> notRunning = new ArrayList<>();
        for (String wanted : target.members()) {
            if (!config.contains(wanted) && views.containsKey(wanted)) {
                if (views.get(wanted).role() == Role.UNREACHABLE) {
                    // a Pending pod (no node fits it), an image pull: it is added once it runs; the other steps go on
                    // meanwhile
                    notRunning.add(wanted);
                    continue;
                }
                if (views.get(wanted).role() != Role.UNINITIATED) {
                    return new ReplicaSetState.Converging(
                            "WaitingForMember",
                            "waiting for " + wanted + " to answer as an empty member before adding it",
                            configured);
                }
                ReplicaSetConfig next = config.adding(wanted);
                rs.reconfigure(next);
                LOG.infof("event=replicaset-member-added replicaSet=%s host=%s", target.replicaSetName(), wanted);
                return new ReplicaSetState.Converging(
                        "AddingMember", "adding " + wanted + " to the replica set", next.hosts());
            }
        }
        Comparator<String> byOrdinal = Comparator.comparingInt(h -> ordinal(target, h));
        Optional<String> leaving =
                configured.stream().filter(h -> !target.members().contains(h)).max(byOrdinal);
        if (leaving.isPresent()) {
            if (configured.stream()
                    .anyMatch(h -> h.equals(primary.host()) && !target.members().contains(h))) {
                rs.stepDown();
                return new ReplicaSetState.Converging(
                        "SteppingDown",
                        "primary " + primary.host() + " is leaving the replica set: stepping it down first",
                        configured);
            }
            ReplicaSetConfig next = config.removing(leaving.get());
            Optional<ReplicaSetState> noMajority =
                    withoutHealthyMajority(next, views, "removing " + leaving.get(), configured);
            if (noMajority.isPresent()) {
                return noMajority.get();
            }
            rs.reconfigure(next);
            LOG.infof("event=replicaset-member-removed replicaSet=%s host=%s", target.replicaSetName(), leaving.get());
            return new ReplicaSetState.Converging(
                    "RemovingMember",
                    "removing " + leaving.get() + " from the replica set (its pod goes once it is out)",
                    next.hosts());
        }
        List<String> outdated = configured.stream()
                .filter(target.outdated()::contains)
                .sorted(byOrdinal.reversed())
                .toList();
        if (!outdated.isEmpty()) {
            return rollOne(rs, target, views, primary, configured, outdated);
        }
        // raised only as far as the user asks (spec.fastTier.featureCompatibilityVersion): until then a binary rollback
        // stays possible
        String wantedFcv = target.featureCompatibilityVersion();
        String fcv = rs.featureCompatibilityVersion();
        boolean allRunIt = wantedFcv != null
                && configured.stream()
                        .allMatch(h -> views.containsKey(h)
                                && VersionPolicy.compareSeries(
                                                VersionPolicy.series(
                                                        views.get(h).version()),
                                                wantedFcv)
                                        >= 0);
        if (allRunIt && VersionPolicy.compareSeries(wantedFcv, fcv) > 0) {
            rs.setFeatureCompatibilityVersion(wantedFcv);
            LOG.infof("event=replicaset-fcv-set replicaSet=%s fcv=%s", target.replicaSetName(), wantedFcv);
            return new ReplicaSetState.Converging(
                    "SettingFeatureCompatibilityVersion",
                    "every member runs " + target.version() + ": featureCompatibilityVersion " + fcv + " -> "
                            + wantedFcv,
                    configured);
        }
        List<String> waiting = target.users().stream()
                .filter(u -> u.password() == null)
                .map(FastTierUser::secret)
                .toList();
        if (!waiting.isEmpty()) {
            return new ReplicaSetState.Converging(
                    "WaitingForCredentials",
                    "the users' Secrets " + waiting
                            + " do not exist yet (the operator creates them): the data plane starts once every user is on the fast tier",
                    configured);
        }
        target.users().forEach(rs::ensureUser);
        if (!notRunning.isEmpty()) {
            return new ReplicaSetState.Converging(
                    "WaitingForMember",
                    "new member(s) " + notRunning + " do not answer yet (a Pending"
                            + " pod? kubectl describe pod): each is added once it runs; every other step is done",
                    configured);
        }
        return new ReplicaSetState.Converged(configured, fcv);
    }

    /**
     * A configuration whose healthy voting members are fewer than its majority cannot elect or keep a primary (and MongoDB's
     * quorum check refuses the reconfiguration): the step waits, naming the members that are down. Newly added members do
     * not vote until their initial sync ends.
     */
    private static Optional<ReplicaSetState> withoutHealthyMajority(
            ReplicaSetConfig next, Map<String, MemberView> views, String change, List<String> configured) {
        List<String> voters = next.members().stream()
                .filter(m -> !m.newlyAdded())
                .map(ReplicaSetConfig.Member::host)
                .toList();
        List<String> down = voters.stream()
                .filter(h -> !views.containsKey(h) || !views.get(h).role().healthy())
                .toList();
        int majority = voters.size() / 2 + 1;
        if (voters.size() - down.size() >= majority) {
            return Optional.empty();
        }
        return Optional.of(new ReplicaSetState.Converging(
                "WaitingForMajority",
                change + " waits: the configuration after it"
                        + " would have " + (voters.size() - down.size()) + " healthy voting member(s) of "
                        + voters.size() + ", fewer than"
                        + " the " + majority + " that keep a primary; not primary or secondary: " + down,
                configured));
    }

    /** One member onto the current pod template: never while another member is unhealthy, the primary last. */
    private static ReplicaSetState rollOne(
            ReplicaSetClient rs,
            ReplicaSetTarget target,
            Map<String, MemberView> views,
            MemberView primary,
            List<String> configured,
            List<String> outdated) {
        List<String> unhealthy = configured.stream()
                .filter(h -> !views.containsKey(h) || !views.get(h).role().healthy())
                .toList();
        if (!unhealthy.isEmpty()) {
            return new ReplicaSetState.Converging(
                    "WaitingForMembers",
                    "the next member restarts once every member is" + " primary or secondary again; not yet: "
                            + unhealthy,
                    configured);
        }
        Optional<String> secondary = outdated.stream()
                .filter(h -> views.get(h).role() == Role.SECONDARY)
                .findFirst();
        if (secondary.isPresent()) {
            return new ReplicaSetState.RestartMember(
                    secondary.get(),
                    "RestartingMember",
                    "restarting secondary " + secondary.get() + " on the current pod template (mongod "
                            + target.version() + ")",
                    configured);
        }
        // a secondary whose pod is on the new template may not run the new mongod yet (the pod was replaced, the
        // process not yet restarted): the primary steps down only once the others answer on the wanted series
        String wantedSeries = VersionPolicy.series(target.version());
        List<String> notYet = configured.stream()
                .filter(h -> !h.equals(primary.host()))
                .filter(h -> wantedSeries != null
                        && !wantedSeries.equals(
                                VersionPolicy.series(views.get(h).version())))
                .toList();
        if (configured.size() > 1 && !notYet.isEmpty()) {
            return new ReplicaSetState.Converging(
                    "WaitingForMembers",
                    "primary " + primary.host() + " steps down once every" + " other member runs mongod " + wantedSeries
                            + "; not yet: " + notYet,
                    configured);
        }
        if (configured.size() > 1) {
            rs.stepDown();
            return new ReplicaSetState.Converging(
                    "SteppingDown",
                    "every other member runs the current pod template;" + " stepping primary " + primary.host()
                            + " down before restarting it",
                    configured);
        }
        return new ReplicaSetState.RestartMember(
                primary.host(),
                "RestartingMember",
                "restarting the only member " + primary.host() + " on the current pod template (mongod "
                        + target.version() + ")",
                configured);
    }

    private static int ordinal(ReplicaSetTarget target, String host) {
        int i = target.podHosts().indexOf(host);
        return i < 0 ? Integer.MAX_VALUE : i; // a member without a pod is the first to go
    }
}
