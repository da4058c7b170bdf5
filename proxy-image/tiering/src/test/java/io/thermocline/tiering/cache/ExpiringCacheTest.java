package io.thermocline.tiering.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ExpiringCacheTest {

    final AtomicLong now = new AtomicLong(1_000);

    ExpiringCache<String, Integer> cache(int capacity, long expireNanos) {
        return new ExpiringCache<>(capacity, Duration.ofNanos(expireNanos), now::get);
    }

    @Test
    void pastCapacityTheLeastRecentlyUsedIsForgottenNotTheNewest() {
        ExpiringCache<String, Integer> cache = cache(2, 0);
        cache.put("a", 1);
        cache.put("b", 2);
        assertThat(cache.get("a")).isEqualTo(1); // a is now more recent than b
        cache.put("c", 3);
        assertThat(cache.get("b")).isNull();
        assertThat(cache.get("a")).isEqualTo(1);
        assertThat(cache.get("c")).isEqualTo(3);
        assertThat(cache.size()).isEqualTo(2);
    }

    @Test
    void anEntryUnusedForTheExpiryIsGoneAndUseKeepsItAlive() {
        ExpiringCache<String, Integer> cache = cache(10, 100);
        cache.put("used", 1);
        cache.put("idle", 2);
        now.addAndGet(60);
        assertThat(cache.get("used")).isEqualTo(1);
        now.addAndGet(60); // idle: 120 since its put; used: 60 since its get
        assertThat(cache.contains("idle")).isFalse();
        assertThat(cache.get("used")).isEqualTo(1);
        now.addAndGet(100);
        assertThat(cache.get("used")).isNull();
        assertThat(cache.size()).isZero();
    }

    @Test
    void containsDoesNotCountAsUseSoItNeitherRefreshesExpiryNorOrder() {
        ExpiringCache<String, Integer> cache = cache(2, 100);
        cache.put("a", 1);
        cache.put("b", 2);
        assertThat(cache.contains("a")).isTrue();
        cache.put("c", 3);
        assertThat(cache.contains("a")).isFalse();
        now.addAndGet(99);
        assertThat(cache.contains("b")).isTrue();
        now.addAndGet(1);
        assertThat(cache.contains("b")).isFalse();
    }

    @Test
    void mergeCombinesWithALiveEntryOnlyAndRemoveReturnsTheValue() {
        ExpiringCache<String, Integer> cache = cache(10, 100);
        assertThat(cache.merge("k", 5, Math::max)).isEqualTo(5);
        assertThat(cache.merge("k", 3, Math::max)).isEqualTo(5);
        now.addAndGet(100);
        assertThat(cache.merge("k", 3, Math::max)).isEqualTo(3); // the old 5 had expired
        assertThat(cache.remove("k")).isEqualTo(3);
        assertThat(cache.remove("k")).isNull();
    }

    @Test
    void aCapacityBelowOneOrANegativeExpiryIsRefused() {
        assertThatThrownBy(() -> new ExpiringCache<>(0, Duration.ZERO)).hasMessageContaining("capacity of at least 1");
        assertThatThrownBy(() -> new ExpiringCache<>(1, Duration.ofSeconds(-1))).hasMessageContaining("expireAfterAccess");
    }

    @Test
    void concurrentWritersNeverLeaveMoreThanCapacity() throws Exception {
        ExpiringCache<Integer, Integer> cache = new ExpiringCache<>(64, Duration.ofMinutes(1));
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int base = t * 10_000;
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 10_000; i++) {
                    cache.put(base + i, i);
                    cache.get(base + i / 2);
                }
            });
            thread.start();
            threads.add(thread);
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join(10_000);
        }
        assertThat(cache.size()).isEqualTo(64);
    }
}
