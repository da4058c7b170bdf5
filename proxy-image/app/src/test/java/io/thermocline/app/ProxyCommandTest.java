package io.thermocline.app;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ProxyCommandTest {

    @Test
    void helpListsEveryFlag() {
        StringWriter out = new StringWriter();
        CommandLine cli = Thermocline.commandLine();
        cli.setOut(new PrintWriter(out));
        int code = cli.execute("proxy", "--help");
        assertThat(code).isZero();
        assertThat(out.toString()).contains("--listen", "--archive-uri", "--fast-uri", "--config", "--http",
                "--max-client-connections", "--archive-connection-budget", "--fast-connection-budget", "--instance-id",
                "--replicas", "--compressors", "--drain-timeout", "--read-consistency");
    }

    @Test
    void topLevelHelpNamesTheProxyCommand() {
        StringWriter out = new StringWriter();
        CommandLine cli = Thermocline.commandLine();
        cli.setOut(new PrintWriter(out));
        assertThat(cli.execute("--help")).isZero();
        assertThat(out.toString()).contains("proxy");
    }

    @Test
    void topLevelHelpNamesEverySubcommand() {
        StringWriter out = new StringWriter();
        CommandLine cli = Thermocline.commandLine();
        cli.setOut(new PrintWriter(out));
        assertThat(cli.execute("--help")).isZero();
        assertThat(out.toString()).contains("proxy", "feeder", "evictor", "warmer"); // embedded: the demo jar's (EmbeddedMainTest)
    }

    @Test
    void portInUseIsReportedWithTheFlagsToChange() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            StringWriter err = new StringWriter();
            CommandLine cli = new CommandLine(new ProxyCommand(Map.of()));
            cli.setErr(new PrintWriter(err));
            int code = cli.execute("--listen", "127.0.0.1:" + taken.getLocalPort(), "--http", "127.0.0.1:0",
                    "--archive-uri", "mongodb://127.0.0.1:1");
            assertThat(code).isEqualTo(1);
            assertThat(err.toString()).contains("cannot listen on 127.0.0.1:" + taken.getLocalPort()).contains("--listen");
        }
    }

    @Test
    void portInUseNamesTheOnePortThatIsTaken() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            StringWriter err = new StringWriter();
            CommandLine cli = new CommandLine(new ProxyCommand(Map.of()));
            cli.setErr(new PrintWriter(err));
            int code = cli.execute("--listen", "127.0.0.1:0", "--http", "127.0.0.1:" + port, "--archive-uri", "mongodb://127.0.0.1:1");
            assertThat(code).isEqualTo(1);
            assertThat(err.toString()).contains("cannot listen on 127.0.0.1:" + port + " (HTTP")
                    .contains("port " + port + " is in use")
                    .doesNotContain("127.0.0.1:0")
                    .contains("--http");
        }
    }

    @Test
    void missingArchiveUriIsReportedByFieldWithExitCode2() {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new ProxyCommand(Map.of()));
        cli.setErr(new PrintWriter(err));
        int code = cli.execute("--listen", "127.0.0.1:0");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("tiers.archive.uri");
    }

    @Test
    void flagsOverrideEnvironmentAndFile() {
        ProxyCommand command = new ProxyCommand(Map.of("THERMOCLINE_TIERS_ARCHIVE_URI", "mongodb://env:1",
                "THERMOCLINE_PROXY_MAX_CLIENT_CONNECTIONS", "7"));
        new CommandLine(command).parseArgs("--archive-uri", "mongodb://flag:2/?replicaSet=rs0", "--listen", "127.0.0.1:27999",
                "--http", "9191", "--compressors", "zlib,snappy", "--instance-id", "p-1", "--read-consistency", "session");
        var config = command.loadConfig();
        assertThat(config.tiers().archive().uri()).isEqualTo("mongodb://flag:2/?replicaSet=rs0");
        assertThat(config.proxy().port()).isEqualTo(27999);
        assertThat(config.proxy().listenHost()).isEqualTo("127.0.0.1");
        assertThat(config.proxy().httpPort()).isEqualTo(9191);
        assertThat(config.proxy().maxClientConnections()).isEqualTo(7);
        assertThat(config.proxy().compressors()).containsExactly("zlib", "snappy");
        assertThat(config.fleet().instanceId()).isEqualTo("p-1");
        assertThat(config.proxy().readConsistency()).isEqualTo(io.thermocline.config.ReadConsistency.SESSION);
    }

    @Test
    void badListenAddressNamesTheFlag() {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new ProxyCommand(Map.of()));
        cli.setErr(new PrintWriter(err));
        assertThat(cli.execute("--listen", "localhost:http", "--archive-uri", "mongodb://a:1")).isEqualTo(2);
        assertThat(err.toString()).contains("--listen");
    }
}
