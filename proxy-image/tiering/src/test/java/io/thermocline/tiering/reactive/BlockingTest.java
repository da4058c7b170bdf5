package io.thermocline.tiering.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import java.util.List;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import org.junit.jupiter.api.Test;

class BlockingTest {

    static <T> Publisher<T> of(List<T> items, RuntimeException error) {
        return subscriber -> subscriber.onSubscribe(new Subscription() {
            boolean done;

            @Override
            public void request(long n) {
                if (done) {
                    return;
                }
                done = true;
                items.forEach(subscriber::onNext);
                if (error != null) {
                    subscriber.onError(error);
                } else {
                    subscriber.onComplete();
                }
            }

            @Override
            public void cancel() {
                done = true;
            }
        });
    }

    @Test
    void collectsEveryElementInOrder() {
        assertThat(Blocking.list(of(List.of(1, 2, 3), null))).containsExactly(1, 2, 3);
        assertThat(Blocking.single(of(List.of("a"), null))).contains("a");
        assertThat(Blocking.single(of(List.<String>of(), null))).isEmpty();
    }

    @Test
    void rethrowsTheDriversOwnException() {
        MongoException failure = new MongoException(11000, "duplicate key");
        assertThatThrownBy(() -> Blocking.run(of(List.of(1), failure))).isSameAs(failure);
    }
}
