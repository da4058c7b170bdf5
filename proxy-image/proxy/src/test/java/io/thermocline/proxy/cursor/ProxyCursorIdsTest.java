package io.thermocline.proxy.cursor;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProxyCursorIdsTest {

    @Test
    void proxyIdsNameTheirInstanceAndArePositive() {
        ProxyCursorIds a = new ProxyCursorIds("proxy-a");
        ProxyCursorIds b = new ProxyCursorIds("proxy-b");
        for (int i = 0; i < 1000; i++) {
            long id = a.next();
            assertThat(id).isPositive();
            assertThat(a.ownedHere(id)).isTrue();
            assertThat(ProxyCursorIds.ownerOf(id)).isEqualTo(a.instanceBits());
        }
        assertThat(a.instanceBits()).isNotEqualTo(b.instanceBits());
        assertThat(b.ownedHere(a.next())).isFalse();
    }
}
