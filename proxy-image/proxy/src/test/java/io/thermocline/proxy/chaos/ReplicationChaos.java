package io.thermocline.proxy.chaos;

import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.member.Member;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Disturbs the secondaries of an embedded replica set, one disturbance at a time so a majority always
 * acknowledges: replication lag, one secondary paused, one killed and restarted, each for a random while.
 * For runs where secondaries serve reads: a read that went to a member behind its point would be stale.
 */
public final class ReplicationChaos implements AutoCloseable {

    private final EmbeddedReplicaSet set;
    private final Random random;
    private final AtomicBoolean stopped = new AtomicBoolean();
    public final AtomicInteger disturbances = new AtomicInteger();
    private Thread thread;

    public ReplicationChaos(EmbeddedReplicaSet set, long seed) {
        this.set = set;
        this.random = new Random(seed);
    }

    public ReplicationChaos start() {
        List<Member> secondaries = set.secondaries();
        thread = new Thread(() -> {
            try {
                while (!stopped.get()) {
                    Member victim = secondaries.get(random.nextInt(secondaries.size()));
                    Duration spell = Duration.ofMillis(200 + random.nextInt(600));
                    switch (random.nextInt(3)) {
                        case 0 -> {
                            set.setReplicationLag(Duration.ofMillis(100 + random.nextInt(400)));
                            Thread.sleep(spell.toMillis());
                            set.setReplicationLag(Duration.ZERO);
                        }
                        case 1 -> {
                            set.pauseReplication(victim);
                            Thread.sleep(spell.toMillis());
                            set.resumeReplication(victim);
                        }
                        default -> {
                            set.kill(victim);
                            Thread.sleep(spell.toMillis());
                            set.restart(victim);
                        }
                    }
                    disturbances.incrementAndGet();
                    Thread.sleep(100 + random.nextInt(300));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "replication-chaos");
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    /** Stops disturbing; the last disturbance is undone before this returns. */
    @Override
    public void close() throws InterruptedException {
        stopped.set(true);
        thread.join(Duration.ofSeconds(10).toMillis());
    }
}
