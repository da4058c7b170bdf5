package io.thermocline.operator.fasttier.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The TLS rollout as the operator drives it, on a model of the fast tier's members and the data plane's
 * pods: each reconcile takes {@link TlsRollout#next}, restarts at most one member onto the template (as
 * the OnDelete roll does) and at most one client pod onto its new template (as a rolling update does).
 * After every single restart, every member must reach every other (replication) and every client
 * every member: in every state of the roll, not just at its ends.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class TlsRolloutTest {

    private static final int MEMBERS = 3;
    private static final int CLIENTS = 2;

    private final List<TlsMode> members = new ArrayList<>();
    /** true: that client pod connects with TLS. */
    private final List<Boolean> clients = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final List<TlsMode> templates = new ArrayList<>();
    private TlsMode template = TlsMode.DISABLED;

    @Test
    void fromPlainTextToRequireTlsEveryMemberAndClientStayConnected() {
        start(TlsMode.DISABLED, false);
        roll(TlsMode.REQUIRE);
        assertThat(members).containsOnly(TlsMode.REQUIRE);
        assertThat(clients).containsOnly(true);
        assertThat(templates).containsSubsequence(TlsMode.ALLOW, TlsMode.PREFER, TlsMode.REQUIRE);
        assertThat(violations).isEmpty();
    }

    @Test
    void fromRequireTlsBackToPlainTextEveryMemberAndClientStayConnected() {
        start(TlsMode.REQUIRE, true);
        roll(TlsMode.DISABLED);
        assertThat(members).containsOnly(TlsMode.DISABLED);
        assertThat(clients).containsOnly(false);
        assertThat(templates).containsSubsequence(TlsMode.PREFER, TlsMode.ALLOW, TlsMode.DISABLED);
        assertThat(violations).isEmpty();
    }

    @Test
    void requireTlsWaitsForTheLastPlainTextClient() {
        start(TlsMode.PREFER, false);
        // the clients' new template exists, but one pod still runs the old (plain-text) one
        clients.set(0, true);
        TlsRollout next = TlsRollout.next(TlsMode.REQUIRE, TlsMode.PREFER, members, MEMBERS, false);
        assertThat(next.template()).isEqualTo(TlsMode.PREFER);
        assertThat(next.clientsTls()).isTrue();
        assertThat(TlsRollout.next(TlsMode.REQUIRE, TlsMode.PREFER, members, MEMBERS, true).template()).isEqualTo(TlsMode.REQUIRE);
    }

    @Test
    void aNewFastTierStartsWithTlsAtOnceAndNoStepWhileARollIsUnderWay() {
        assertThat(TlsRollout.next(TlsMode.REQUIRE, null, List.of(), MEMBERS, false)).isEqualTo(new TlsRollout(TlsMode.REQUIRE, true));
        List<TlsMode> mixed = List.of(TlsMode.ALLOW, TlsMode.DISABLED, TlsMode.DISABLED);
        assertThat(TlsRollout.next(TlsMode.REQUIRE, TlsMode.ALLOW, mixed, MEMBERS, false))
                .as("members still without TLS: clients stay plain, the template stays").isEqualTo(new TlsRollout(TlsMode.ALLOW, false));
        assertThat(TlsRollout.next(TlsMode.REQUIRE, TlsMode.ALLOW, List.of(TlsMode.ALLOW, TlsMode.ALLOW), MEMBERS, false).template())
                .as("a member missing (its pod not running) is not a finished roll").isEqualTo(TlsMode.ALLOW);
    }

    @Test
    void theModelSeesABrokenRollAJumpStraightToRequireTls() {
        start(TlsMode.DISABLED, false);
        template = TlsMode.REQUIRE;
        members.set(0, TlsMode.REQUIRE);
        check();
        assertThat(violations).isNotEmpty(); // what the stepwise roll avoids
    }

    private void start(TlsMode mode, boolean tls) {
        template = mode;
        for (int i = 0; i < MEMBERS; i++) {
            members.add(mode);
        }
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(tls);
        }
    }

    /** Reconciles until nothing changes, one member restart and one client restart per reconcile. */
    private void roll(TlsMode target) {
        for (int reconcile = 0; reconcile < 100; reconcile++) {
            boolean clientsOnTls = clients.stream().allMatch(c -> c);
            TlsRollout next = TlsRollout.next(target, template, members, MEMBERS, clientsOnTls);
            if (next.template() != template) {
                templates.add(next.template());
            }
            template = next.template();
            boolean changed = false;
            int outdated = members.indexOf(members.stream().filter(m -> m != template).findFirst().orElse(null));
            if (outdated >= 0) {
                members.set(outdated, template);
                changed = true;
                check();
            }
            int client = clients.indexOf(!next.clientsTls());
            if (client >= 0) {
                clients.set(client, next.clientsTls());
                changed = true;
                check();
            }
            if (!changed && template == target) {
                return;
            }
        }
        throw new AssertionError("the roll did not end: " + members + " " + clients);
    }

    private void check() {
        for (TlsMode from : members) {
            for (TlsMode to : members) {
                if (!from.reaches(to)) {
                    violations.add("member " + from + " cannot reach member " + to + " in " + members);
                }
            }
        }
        for (boolean tls : clients) {
            for (TlsMode member : members) {
                if (tls ? !member.acceptsTls() : !member.acceptsPlain()) {
                    violations.add((tls ? "TLS" : "plain-text") + " client refused by " + member + " in " + members);
                }
            }
        }
    }
}
