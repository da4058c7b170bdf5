package io.thermocline.proxy.cursor;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.proxy.topology.Tier;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CursorRegistryTest {
    private static final long MINUTE = 60_000_000_000L;
    private final CursorRegistry registry = new CursorRegistry(new ProxyCursorIds("p-0"));
    private final ServerAddress member = new ServerAddress("m", 1);

    @Test
    void idleCursorsAreSweptUnlessUsedOrOpenedWithNoCursorTimeout() {
        CursorRoute idle = registry.register(Tier.ARCHIVE, member, 11, "db.c", null, new CursorOwner.Connection(1), false, null, 0);
        CursorRoute used = registry.register(Tier.ARCHIVE, member, 12, "db.c", null, new CursorOwner.Connection(1), false, null, 0);
        CursorRoute pinned = registry.register(Tier.ARCHIVE, member, 13, "db.c", null, new CursorOwner.Connection(1), true, null, 0);
        assertThat(registry.use(used.proxyId(), 25 * MINUTE)).contains(used);
        assertThat(registry.removeIdle(30 * MINUTE, 31 * MINUTE)).containsExactly(idle);
        assertThat(registry.use(idle.proxyId(), 31 * MINUTE)).isEmpty();
        assertThat(registry.use(pinned.proxyId(), 90 * MINUTE)).contains(pinned);
        assertThat(registry.size()).isEqualTo(2);
    }

    @Test
    void ownersTakeTheirCursorsWithThem() {
        SessionKey s = new SessionKey(new BsonInt32(1));
        CursorRoute a = registry.register(Tier.ARCHIVE, member, 1, "db.c", null, new CursorOwner.Session(s), false, null, 0);
        CursorRoute b = registry.register(Tier.ARCHIVE, member, 2, "db.c", null, new CursorOwner.Connection(7), false, null, 0);
        assertThat(registry.removeOwnedBy(new CursorOwner.Session(s))).containsExactly(a);
        assertThat(registry.removeOwnedBy(new CursorOwner.Connection(7))).containsExactly(b);
        assertThat(registry.size()).isZero();
    }
}
