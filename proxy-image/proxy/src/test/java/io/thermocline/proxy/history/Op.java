package io.thermocline.proxy.history;

/**
 * One operation of a history: who ran it ({@code process} is the client, {@code session} its
 * explicit causally consistent session or {@link #NO_SESSION}), when (monotonic nanos shared by every
 * thread), what it asked and what came back.
 */
record Op(int index, int process, int session, long invokedAt, long completedAt, Call call, Outcome outcome) {

    static final int NO_SESSION = -1;

    boolean acknowledged() {
        return !(outcome instanceof Outcome.Indeterminate);
    }

    boolean inSession() {
        return session != NO_SESSION;
    }

    /** One line for a failure report, times in ms since {@code origin}. */
    String describe(long origin) {
        return String.format("#%d p%d%s [%.1f..%.1f ms] %s -> %s", index, process, inSession() ? " s" + session : "",
                (invokedAt - origin) / 1e6, (completedAt - origin) / 1e6, brief(call), outcome);
    }

    /** A big batch (the adopted documents) as its size and key range. */
    private static String brief(Call call) {
        if (call instanceof Call.Insert insert && insert.docs().size() > 3) {
            return "Insert[" + insert.docs().size() + " docs, keys " + insert.docs().get(0).key() + ".."
                    + insert.docs().get(insert.docs().size() - 1).key() + "]";
        }
        return call.toString();
    }
}
