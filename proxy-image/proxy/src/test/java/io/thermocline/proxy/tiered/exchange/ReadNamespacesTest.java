package io.thermocline.proxy.tiered.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The namespaces a read's barrier waits for: its own collection, or every tiered one when it may read another. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReadNamespacesTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(
            delimiter = '|',
            nullValues = "-",
            value = {
                "{find: 'orders', filter: {customer: 'c1'}}                                         | shop.orders",
                "{count: 'orders', query: {}}                                                       | shop.orders",
                "{distinct: 'orders', key: 'state'}                                                 | shop.orders",
                "{aggregate: 'orders', pipeline: [{$match: {a: 1}}, {$group: {_id: '$a'}}], cursor: {}} | shop.orders",
                "{aggregate: 'orders', pipeline: [{$lookup: {from: 'carts', localField: 'a', foreignField: 'b', as: 'c'}}]} | -",
                "{aggregate: 'orders', pipeline: [{$facet: {x: [{$unionWith: 'carts'}]}}]}           | -",
                "{aggregate: 'orders', pipeline: [{$match: {from: 'x'}}]}                           | -",
                "{aggregate: 1, pipeline: [{$documents: [{a: 1}]}]}                                 | -",
                "{explain: {find: 'orders'}}                                                        | -",
                "{mapReduce: 'orders'}                                                              | -",
            })
    void oneCollectionUnlessThePipelineMayReadAnother(String command, String expected) {
        assertThat(ReadNamespaces.of("shop", BsonDocument.parse(command)))
                .isEqualTo(expected == null ? null : Set.of(expected));
    }
}
