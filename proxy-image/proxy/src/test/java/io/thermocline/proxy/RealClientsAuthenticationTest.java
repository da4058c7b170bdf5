package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCredential;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.netty.pkitesting.X509Bundle;
import io.thermocline.config.TlsConfig;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.security.tls.PemTrust;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.thermocline.proxy.ExternalClient.firstExisting;
import static io.thermocline.proxy.ExternalClient.pymongoPython;
import static io.thermocline.proxy.ExternalClient.run;
import static io.thermocline.proxy.TestCertificates.ca;
import static io.thermocline.proxy.TestCertificates.server;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * pymongo and mongosh through a proxy that requires TLS and SCRAM: both mechanisms, a wrong password
 * (18), a command before authentication (13), an insert and a $lookup the user may not run (13),
 * and plain text refused. They skip when the client is not installed.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class RealClientsAuthenticationTest {
    private static SecuredProxy secured;
    private static Path caFile;

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("thermocline-real-clients-tls");
        X509Bundle ca = ca("real-clients-ca");
        X509Bundle cert = server(ca, "127.0.0.1", 1);
        Path certFile = Files.writeString(dir.resolve("tls.crt"), cert.getCertificatePathPEM());
        Path keyFile = Files.writeString(dir.resolve("tls.key"), cert.getPrivateKeyPEM());
        caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        secured = SecuredProxy.withTls(ClientTls.from(new TlsConfig("required", certFile.toString(), keyFile.toString(), null, null)));
        try (MongoClient root = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(secured.uri("", "?tls=true&serverSelectionTimeoutMS=5000")))
                .applyToSslSettings(ssl -> ssl.context(PemTrust.sslContext(caFile)))
                .credential(MongoCredential.createCredential("root", "admin", "root-pw".toCharArray())).build())) {
            root.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1).append("customer", 7));
            root.getDatabase("shop").getCollection("customers").insertOne(new Document("_id", 7));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        secured.close();
    }

    @Test
    void pymongoOverTlsLogsInWithBothMechanismsAndGets18And13() throws Exception {
        String python = pymongoPython();
        assumeTrue(python != null, "pymongo not found: apt-get install -y python3-pymongo (.ci/run does), or set THERMOCLINE_PYTHON");
        Path script = Files.createTempFile("thermocline-pymongo-auth", ".py");
        Files.writeString(script, """
                import sys, json, pymongo
                from pymongo.errors import OperationFailure, ServerSelectionTimeoutError
                port, ca = int(sys.argv[1]), sys.argv[2]
                def client(tls=True, **kw):
                    if tls:
                        kw.update(tls=True, tlsCAFile=ca)
                    return pymongo.MongoClient('127.0.0.1', port, serverSelectionTimeoutMS=3000, **kw)
                def code(f):
                    try:
                        f()
                        return 'allowed'
                    except OperationFailure as e:
                        return e.code
                    except ServerSelectionTimeoutError:
                        return 'no server'
                out = {}
                for mech, user, pw in [('SCRAM-SHA-256', 'alice', 'alice-pw'), ('SCRAM-SHA-1', 'sha1only', 'old-pw')]:
                    c = client(username=user, password=pw, authSource='admin', authMechanism=mech)
                    c.shop.py.insert_one({'m': mech})
                    out[mech] = c.admin.command('connectionStatus')['authInfo']['authenticatedUsers'][0]['user']
                    c.close()
                for mech in ['SCRAM-SHA-256', 'SCRAM-SHA-1']:
                    out['wrong ' + mech] = code(lambda: client(username='alice', password='wrong', authSource='admin',
                                                               authMechanism=mech).shop.py.find_one())
                out['anonymous'] = code(lambda: client().shop.py.find_one())
                reporter = client(username='reporter', password='reporter-pw', authSource='admin')
                out['read-only insert'] = code(lambda: reporter.shop.orders.insert_one({'_id': 2}))
                out['lookup'] = code(lambda: list(reporter.shop.orders.aggregate([{'$lookup': {
                    'from': 'customers', 'localField': 'customer', 'foreignField': '_id', 'as': 'c'}}])))
                out['plain text'] = code(lambda: client(tls=False, username='alice', password='alice-pw').shop.py.find_one())
                print('RESULT ' + json.dumps(out, sort_keys=True))
                """);
        ExternalClient.Result r = run(List.of(python, script.toString(), String.valueOf(secured.proxy.port()), caFile.toString()));
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("RESULT {\"SCRAM-SHA-1\": \"sha1only\", \"SCRAM-SHA-256\": \"alice\", \"anonymous\": 13, "
                + "\"lookup\": 13, \"plain text\": \"no server\", \"read-only insert\": 13, "
                + "\"wrong SCRAM-SHA-1\": 18, \"wrong SCRAM-SHA-256\": 18}");
    }

    @Test
    void mongoshOverTlsLogsInWithBothMechanismsAndGets18And13() throws Exception {
        String mongosh = firstExisting(System.getenv("THERMOCLINE_MONGOSH"),
                System.getProperty("user.home") + "/.cache/thermocline/mongosh/bin/mongosh");
        assumeTrue(mongosh != null, "mongosh not found: set THERMOCLINE_MONGOSH or run "
                + "npm install --prefix ~/.cache/thermocline/mongosh -g mongosh@2.12.0 (.ci/run does)");
        List<String> tls = List.of("--tls", "--tlsCAFile", caFile.toString());
        Path script = Files.createTempFile("thermocline-mongosh-auth", ".js");
        Files.writeString(script, """
                const s = db.getSiblingDB('admin').runCommand({connectionStatus: 1});
                db.getSiblingDB('shop').sh.insertOne({ok: 1});
                print('RESULT ' + s.authInfo.authenticatedUsers[0].user + ' ' + db.getSiblingDB('shop').sh.countDocuments({}));
                """);
        for (String[] login : new String[][]{{"SCRAM-SHA-256", "alice", "alice-pw"}, {"SCRAM-SHA-1", "sha1only", "old-pw"}}) {
            ExternalClient.Result r = mongosh(mongosh, tls, "--username", login[1], "--password", login[2],
                    "--authenticationDatabase", "admin", "--authenticationMechanism", login[0], "--file", script.toString());
            assertThat(r.exit()).as(r.output()).isZero();
            assertThat(r.output()).contains("RESULT " + login[1] + " ");
        }
        ExternalClient.Result wrong = mongosh(mongosh, tls, "--username", "alice", "--password", "wrong",
                "--authenticationDatabase", "admin", "--eval", "db.runCommand({ping: 1})");
        assertThat(wrong.exit()).isNotZero();
        assertThat(wrong.output()).contains("Authentication failed");
        String codeOf = "function codeOf(f) { try { f(); return 'allowed'; } catch (e) { return e.code; } }\n";
        ExternalClient.Result anonymous = mongosh(mongosh, tls, "--eval", codeOf
                + "print('RESULT ' + codeOf(() => db.getSiblingDB('shop').orders.findOne()))");
        assertThat(anonymous.output()).as(anonymous.output()).contains("RESULT 13");
        ExternalClient.Result denied = mongosh(mongosh, tls, "--username", "reporter", "--password", "reporter-pw",
                "--authenticationDatabase", "admin", "--eval", codeOf
                        + "const shop = db.getSiblingDB('shop');\n"
                        + "print('RESULT ' + codeOf(() => shop.orders.insertOne({_id: 3})) + ' ' + codeOf(() => shop.orders.aggregate("
                        + "[{$lookup: {from: 'customers', localField: 'customer', foreignField: '_id', as: 'c'}}]).toArray()))");
        assertThat(denied.output()).as(denied.output()).contains("RESULT 13 13");
        ExternalClient.Result plain = run(List.of(mongosh, secured.uri("", "test?serverSelectionTimeoutMS=2000"), "--quiet", "--norc",
                "--username", "alice", "--password", "alice-pw", "--authenticationDatabase", "admin", "--eval", "db.runCommand({ping: 1})"));
        assertThat(plain.exit()).as(plain.output()).isNotZero();
    }

    private static ExternalClient.Result mongosh(String mongosh, List<String> tls, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(mongosh, secured.uri("", "test"), "--quiet", "--norc"));
        command.addAll(tls);
        command.addAll(List.of(args));
        return run(command);
    }
}
