package io.thermocline.proxy;

import io.thermocline.embedded.EmbeddedReplicaSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static io.thermocline.proxy.ExternalClient.firstExisting;
import static io.thermocline.proxy.ExternalClient.pymongoPython;
import static io.thermocline.proxy.ExternalClient.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two clients that are not the Java driver: mongosh (Node driver) and pymongo. They skip with
 * a message when the client is not installed; .ci/run installs both.
 */
class RealClientsTest {
    private static EmbeddedReplicaSet rs;
    private static ProxyFixture fixture;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.startSingle();
        fixture = ProxyFixture.inFrontOf(rs.connectionString(), "");
    }

    @AfterAll
    static void stop() {
        fixture.close();
        rs.close();
    }

    @Test
    void mongoshRunsAScriptThroughTheProxy() throws Exception {
        String mongosh = firstExisting(System.getenv("THERMOCLINE_MONGOSH"),
                System.getProperty("user.home") + "/.cache/thermocline/mongosh/bin/mongosh");
        assumeTrue(mongosh != null, "mongosh not found: set THERMOCLINE_MONGOSH or run "
                + "npm install --prefix ~/.cache/thermocline/mongosh -g mongosh@2.12.0 (.ci/run does)");
        Path script = Files.createTempFile("thermocline-mongosh", ".js");
        Files.writeString(script, """
                const db1 = db.getSiblingDB('shell');
                db1.items.drop();
                db1.items.insertMany(Array.from({length: 100}, (_, i) => ({_id: i, k: i % 3})));
                const seen = db1.items.find().sort({_id: 1}).batchSize(7).toArray().length;
                const groups = db1.items.aggregate([{$group: {_id: '$k', n: {$sum: 1}}}, {$sort: {_id: 1}}]).toArray();
                db1.items.createIndex({k: 1});
                let dup = 0;
                try { db1.items.insertOne({_id: 1}); } catch (e) { dup = e.code; }
                const hello = db.hello();
                print('RESULT ' + JSON.stringify({seen: seen, groups: groups.map(g => g.n), dup: dup,
                    count: db1.items.countDocuments({k: 0}), msg: hello.msg}));
                """);
        ExternalClient.Result r = run(List.of(mongosh, fixture.uri() + "/test", "--quiet", "--norc", "--file", script.toString()));
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("RESULT {\"seen\":100,\"groups\":[34,33,33],\"dup\":11000,\"count\":34,\"msg\":\"isdbgrid\"}");
    }

    @Test
    void pymongoRunsThroughTheProxyWithZlibCompression() throws Exception {
        String python = pymongoPython();
        assumeTrue(python != null,
                "pymongo not found: apt-get install -y python3-pymongo (.ci/run does), or set THERMOCLINE_PYTHON");
        Path script = Files.createTempFile("thermocline-pymongo", ".py");
        Files.writeString(script, """
                import sys, json, pymongo
                from pymongo.errors import DuplicateKeyError
                client = pymongo.MongoClient(sys.argv[1], compressors='zlib', serverSelectionTimeoutMS=10000)
                coll = client.py.items
                coll.drop()
                coll.insert_many([{'_id': i, 'k': i % 4} for i in range(1000)])
                seen = sum(1 for _ in coll.find().batch_size(7))
                coll.update_many({'k': 1}, {'$set': {'tag': 'one'}})
                tagged = coll.count_documents({'tag': 'one'})
                dup = 0
                try:
                    coll.insert_one({'_id': 5})
                except DuplicateKeyError as e:
                    dup = e.code
                doc = coll.find_one_and_update({'_id': 2}, {'$inc': {'k': 10}}, return_document=pymongo.ReturnDocument.AFTER)
                distinct = sorted(coll.distinct('k'))
                with client.start_session() as s:
                    coll.insert_one({'_id': 'session'}, session=s)
                    in_session = coll.find_one({'_id': 'session'}, session=s) is not None
                print('RESULT ' + json.dumps({'seen': seen, 'tagged': tagged, 'dup': dup, 'k2': doc['k'],
                      'distinct': distinct, 'session': in_session, 'mongos': client.is_mongos}))
                """);
        ExternalClient.Result r = run(List.of(python, script.toString(), fixture.uri()));
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("RESULT {\"seen\": 1000, \"tagged\": 250, \"dup\": 11000, \"k2\": 12, "
                + "\"distinct\": [0, 1, 2, 3, 12], \"session\": true, \"mongos\": true}");
    }
}
