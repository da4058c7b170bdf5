package io.thermocline.proxy.session;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which client connections have used each logical session. Drivers run a session's commands on
 * any pooled connection, so a session (and its cursors) is abandoned only when every
 * connection that used it has closed, or the client ends it.
 */
public final class SessionUsage {
    private final Map<SessionKey, Set<Long>> connectionsBySession = new HashMap<>();
    private final Map<Long, Set<SessionKey>> sessionsByConnection = new HashMap<>();

    public synchronized void used(SessionKey session, long connectionId) {
        connectionsBySession.computeIfAbsent(session, s -> new HashSet<>()).add(connectionId);
        sessionsByConnection.computeIfAbsent(connectionId, c -> new HashSet<>()).add(session);
    }

    /** Forgets a closed connection; returns the sessions no open connection uses any more. */
    public synchronized List<SessionKey> connectionClosed(long connectionId) {
        List<SessionKey> abandoned = new ArrayList<>();
        Set<SessionKey> sessions = sessionsByConnection.remove(connectionId);
        if (sessions == null) {
            return abandoned;
        }
        for (SessionKey s : sessions) {
            Set<Long> users = connectionsBySession.get(s);
            if (users != null) {
                users.remove(connectionId);
                if (users.isEmpty()) {
                    connectionsBySession.remove(s);
                    abandoned.add(s);
                }
            }
        }
        return abandoned;
    }

    public synchronized void ended(SessionKey session) {
        Set<Long> users = connectionsBySession.remove(session);
        if (users != null) {
            for (Long c : users) {
                Set<SessionKey> s = sessionsByConnection.get(c);
                if (s != null) {
                    s.remove(session);
                }
            }
        }
    }

    public synchronized int size() {
        return connectionsBySession.size();
    }
}
