package io.thermocline.operator.fasttier.tls;

import java.util.Collection;

/**
 * How the fast tier goes from no TLS to {@code requireTLS} (or back) without a moment in which two
 * members, or a client and a member, cannot talk, one rolling restart per step:
 * <ol>
 * <li>{@code allowTLS} on every member (each accepts TLS, still sends plain text);</li>
 * <li>then the data plane and the operator connect with TLS (every member accepts it);</li>
 * <li>{@code preferTLS} (members send TLS to each other, still accept plain text);</li>
 * <li>{@code requireTLS}, only once the proxy and feeder run the TLS pod template everywhere.</li>
 * </ol>
 * Turning TLS off walks back: {@code preferTLS}, {@code allowTLS}, clients plain again, {@code disabled}.
 * The next step is taken only when every member runs the current one (the roll is over).
 *
 * @param template     the mode the StatefulSet's pod template is to have
 * @param clientsTls   whether the data plane and the operator connect with TLS now
 */
public record TlsRollout(TlsMode template, boolean clientsTls) {

    /**
     * @param target        what the spec asks for ({@link TlsMode#DISABLED} or {@link TlsMode#REQUIRE})
     * @param templateNow   the mode of the StatefulSet's current template (null: no StatefulSet yet)
     * @param members       the mode each member's pod runs (from the pods' own specs)
     * @param wantedMembers how many members the spec asks for
     * @param clientsOnTls  the data plane's pods all run a template that connects with TLS
     */
    public static TlsRollout next(TlsMode target, TlsMode templateNow, Collection<TlsMode> members, int wantedMembers,
            boolean clientsOnTls) {
        if (templateNow == null) {
            return new TlsRollout(target, target != TlsMode.DISABLED); // a new fast tier starts as it is to be
        }
        boolean allAcceptTls = members.stream().allMatch(TlsMode::acceptsTls) && templateNow.acceptsTls();
        boolean allAcceptPlain = members.stream().allMatch(TlsMode::acceptsPlain) && templateNow.acceptsPlain();
        // the clients follow the members: TLS once every member takes it; plain again only once every member does
        boolean clientsTls = target != TlsMode.DISABLED ? allAcceptTls : !allAcceptPlain;
        boolean settled = members.size() >= wantedMembers && members.stream().allMatch(templateNow::equals);
        if (!settled || templateNow == target) {
            return new TlsRollout(templateNow, clientsTls);
        }
        TlsMode next = templateNow.toward(target);
        if (next == TlsMode.REQUIRE && !clientsOnTls) {
            return new TlsRollout(templateNow, clientsTls); // a plain-text client would be refused
        }
        if (next == TlsMode.DISABLED && clientsOnTls) {
            return new TlsRollout(templateNow, false); // first the clients go back to plain text
        }
        return new TlsRollout(next, clientsTls);
    }
}
