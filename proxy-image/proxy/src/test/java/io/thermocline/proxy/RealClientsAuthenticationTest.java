package io.thermocline.proxy;

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
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** pymongo and mongosh log in through the proxy with SCRAM-SHA-256 and SCRAM-SHA-1; they skip when not installed. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RealClientsAuthenticationTest {
    private static SecuredProxy secured;

    @BeforeAll
    static void start() throws Exception {
        secured = SecuredProxy.start();
    }

    @AfterAll
    static void stop() throws Exception {
        secured.close();
    }

    @Test
    void pymongoLogsInWithBothMechanismsAndGets18And13() throws Exception {
        String python = pymongoPython();
        assumeTrue(python != null, "pymongo not found: apt-get install -y python3-pymongo (.ci/run does), or set THERMOCLINE_PYTHON");
        Path script = Files.createTempFile("thermocline-pymongo-auth", ".py");
        Files.writeString(script, """
                import sys, json, pymongo
                from pymongo.errors import OperationFailure
                port = int(sys.argv[1])
                def client(**kw):
                    return pymongo.MongoClient('127.0.0.1', port, serverSelectionTimeoutMS=5000, **kw)
                out = {}
                for mech, user, pw in [('SCRAM-SHA-256', 'alice', 'alice-pw'), ('SCRAM-SHA-1', 'sha1only', 'old-pw')]:
                    c = client(username=user, password=pw, authSource='admin', authMechanism=mech)
                    c.shop.py.insert_one({'m': mech})
                    out[mech] = c.admin.command('connectionStatus')['authInfo']['authenticatedUsers'][0]['user']
                    c.close()
                for mech in ['SCRAM-SHA-256', 'SCRAM-SHA-1']:
                    try:
                        client(username='alice', password='wrong', authSource='admin', authMechanism=mech).shop.py.find_one()
                        out['wrong ' + mech] = 'logged in'
                    except OperationFailure as e:
                        out['wrong ' + mech] = e.code
                try:
                    client().shop.py.find_one()
                    out['anonymous'] = 'allowed'
                except OperationFailure as e:
                    out['anonymous'] = e.code
                print('RESULT ' + json.dumps(out, sort_keys=True))
                """);
        ExternalClient.Result r = run(List.of(python, script.toString(), String.valueOf(secured.proxy.port())));
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("RESULT {\"SCRAM-SHA-1\": \"sha1only\", \"SCRAM-SHA-256\": \"alice\", \"anonymous\": 13, "
                + "\"wrong SCRAM-SHA-1\": 18, \"wrong SCRAM-SHA-256\": 18}");
    }

    @Test
    void mongoshLogsInWithBothMechanismsAndRefusesAWrongPassword() throws Exception {
        String mongosh = firstExisting(System.getenv("THERMOCLINE_MONGOSH"),
                System.getProperty("user.home") + "/.cache/thermocline/mongosh/bin/mongosh");
        assumeTrue(mongosh != null, "mongosh not found: set THERMOCLINE_MONGOSH or run "
                + "npm install --prefix ~/.cache/thermocline/mongosh -g mongosh@2.12.0 (.ci/run does)");
        Path script = Files.createTempFile("thermocline-mongosh-auth", ".js");
        Files.writeString(script, """
                const s = db.getSiblingDB('admin').runCommand({connectionStatus: 1});
                db.getSiblingDB('shop').sh.insertOne({ok: 1});
                print('RESULT ' + s.authInfo.authenticatedUsers[0].user + ' ' + db.getSiblingDB('shop').sh.countDocuments({}));
                """);
        for (String[] login : new String[][]{{"SCRAM-SHA-256", "alice", "alice-pw"}, {"SCRAM-SHA-1", "sha1only", "old-pw"}}) {
            ExternalClient.Result r = run(List.of(mongosh, secured.uri("", "test"), "--quiet", "--norc", "--username", login[1],
                    "--password", login[2], "--authenticationDatabase", "admin", "--authenticationMechanism", login[0],
                    "--file", script.toString()));
            assertThat(r.exit()).as(r.output()).isZero();
            assertThat(r.output()).contains("RESULT " + login[1] + " ");
        }
        ExternalClient.Result wrong = run(List.of(mongosh, secured.uri("", "test"), "--quiet", "--norc", "--username", "alice",
                "--password", "wrong", "--authenticationDatabase", "admin", "--eval", "db.runCommand({ping: 1})"));
        assertThat(wrong.exit()).isNotZero();
        assertThat(wrong.output()).contains("Authentication failed");
    }
}
