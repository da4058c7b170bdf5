package io.thermocline.proxy.causal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which point reads that missed the fast tier may skip the read barrier: only those whose empty answer means "absent". */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PointReadSkipTest {

    @ParameterizedTest(name = "{0} {1} fenced={2} -> {3}")
    @CsvSource(delimiter = '|', value = {
            "find  | {find: 'o', filter: {_id: 7}, $db: 'shop', lsid: {id: 1}}                          | false | true",
            "find  | {find: 'o', filter: {_id: {$eq: 7}}, projection: {a: 1}, limit: 1, singleBatch: true} | false | true",
            "find  | {find: 'o', filter: {_id: 7}, batchSize: 101, readConcern: {level: 'majority'}}     | false | true",
            "find  | {find: 'o', filter: {_id: 7}, readConcern: {afterClusterTime: {$timestamp: {t: 1, i: 1}}}} | false | true",
            "count | {count: 'o', query: {_id: 7}, $db: 'shop'}                                         | false | true",
            // a fence of any kind: a user delete (answered from the fence) or an eviction (earlier writes may be unmirrored)
            "find  | {find: 'o', filter: {_id: 7}}                                                      | true  | false",
            "count | {count: 'o', query: {_id: 7}}                                                      | true  | false",
            // an empty answer that does not mean absent
            "find  | {find: 'o', filter: {_id: 7}, skip: 1}                                             | false | false",
            "find  | {find: 'o', filter: {_id: 7}, hint: {sparseField: 1}}                              | false | false",
            "find  | {find: 'o', filter: {_id: 7}, min: {_id: 9}, max: {_id: 10}, hint: {_id: 1}}       | false | false",
            "find  | {find: 'o', filter: {_id: 7}, batchSize: 0}                                        | false | false",
            "find  | {find: 'o', filter: {_id: 7, state: 'paid'}}                                       | false | false",
            "find  | {find: 'o', filter: {_id: {$in: [7, 8]}}}                                          | false | false",
            "find  | {find: 'o', filter: {_id: 'a'}, collation: {locale: 'en', strength: 2}}            | false | false",
            "find  | {find: 'o'}                                                                        | false | false",
            "find  | {find: 'o', filter: {_id: 7}, tailable: true}                                      | false | false",
            "find  | {find: 'o', filter: {_id: 7}, someFutureOption: 1}                                 | false | false",
            "count | {count: 'o', query: {_id: 7}, skip: 1}                                             | false | false",
            // distinct: an empty answer may be a document without the field
            "distinct | {distinct: 'o', key: 'a', query: {_id: 7}}                                      | false | false",
            // reads of a past snapshot
            "find  | {find: 'o', filter: {_id: 7}, readConcern: {level: 'snapshot'}}                    | false | false",
            "find  | {find: 'o', filter: {_id: 7}, readConcern: {level: 'majority', atClusterTime: {$timestamp: {t: 1, i: 1}}}} | false | false",
    })
    void skipsOnlyWhenAnEmptyAnswerMeansAbsent(String name, String command, boolean fenced, boolean skips) {
        assertThat(PointReadSkip.allowed(name.trim(), BsonDocument.parse(command), fenced)).isEqualTo(skips);
    }
}
