package io.thermocline.proxy.server.cursors;

/** Who answers for a cursor id this replica does not hold: its owner, unless the hop limit is reached. */
final class OwnerLookup {

    private OwnerLookup() {
    }

    static CursorPeers.Owner of(CursorPeers peers, long cursorId, int hops) {
        if (hops >= CursorPeers.MAX_HOPS) {
            return new CursorPeers.Gone("it reached this proxy replica from another one, which took it for the owner,"
                    + " and the hop limit (" + CursorPeers.MAX_HOPS + ") stops it here: the owner restarted under another id");
        }
        return peers.ownerOf(cursorId);
    }
}
