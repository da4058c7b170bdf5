package io.thermocline.operator.backup;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.thermocline.config.ConfigLoader;
import io.thermocline.operator.api.v1alpha1.RestoreStep;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.layout.ClusterLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * examples/backup/percona, the PBM sample beside a ThermoclineCluster: the cluster renders a config the data plane loads,
 * each patch applied to it is a resource the CRD admits, and the Percona resources name what the others define (the
 * archive's cluster and storage, the backup restored, the resource the scheduled backup patches).
 */
@Timeout(30)
class PerconaSampleTest {

    private static final Path DIR = Path.of("..", "examples", "backup", "percona");
    private static final Path CRD = Path.of("..", "crds", "thermoclineclusters.thermocline.io-v1.yml");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void theClusterAndEachPatchAreResourcesTheCrdAdmitsAndTheDataPlaneLoads() throws IOException {
        JsonNode cluster = read("cluster.yaml").get(0);
        Map<String, String> patterns = patterns();
        List<String> requests = new ArrayList<>();
        List<String> restores = new ArrayList<>();
        for (String patch :
                List.of("backup-point.patch.yaml", "restore-hold.patch.yaml", "restore-resync.patch.yaml")) {
            ObjectNode patched = ((ObjectNode) cluster).deepCopy();
            merge(patched, read(patch).get(0));
            ThermoclineCluster resource =
                    Serialization.unmarshal(YAML.writeValueAsString(patched), ThermoclineCluster.class);
            ClusterLayout layout = new ClusterLayout(resource.getMetadata().getName(), "shop");
            ConfigLoader.parse(
                    DataPlaneConfig.toYaml(resource.getSpec(), layout),
                    DataPlaneConfig.podEnvironment(
                            "mongodb://u:p@archive-rs0-0:27017/?replicaSet=rs0",
                            "mongodb://u:p@fast-0:27017/?replicaSet=x"));
            if (resource.getSpec().backupPoint != null) {
                String request = resource.getSpec().backupPoint.request;
                assertThat(request).matches(patterns.get("backupPoint.request"));
                assertThat(OperationJobs.backupPointJob(layout, request)).hasSizeLessThanOrEqualTo(63);
                requests.add(request);
            }
            if (resource.getSpec().restore != null) {
                String name = resource.getSpec().restore.name;
                assertThat(name).matches(patterns.get("restore.name"));
                for (RestoreStep step : RestoreStep.values()) {
                    assertThat(OperationJobs.restoreJob(layout, name, step)).hasSizeLessThanOrEqualTo(63);
                }
                restores.add(name + "/" + resource.getSpec().restore.step.value());
            }
        }
        assertThat(requests).hasSize(1);
        assertThat(restores)
                .as("one restore, held then resynced")
                .containsExactly("restore-2026-12-06/hold", "restore-2026-12-06/resync");
    }

    @Test
    void thePerconaResourcesNameTheArchiveItsStorageAndTheBackupRestored() throws IOException {
        JsonNode archive = read("archive.yaml").get(0);
        assertThat(archive.path("kind").asText()).isEqualTo("PerconaServerMongoDB");
        assertThat(archive.at("/spec/backup/pitr/enabled").asBoolean())
                .as("PITR: restore to a point's time")
                .isTrue();
        String archiveName = archive.at("/metadata/name").asText();
        JsonNode storages = archive.at("/spec/backup/storages");

        JsonNode backup = read("backup.yaml").get(0);
        assertThat(backup.path("kind").asText()).isEqualTo("PerconaServerMongoDBBackup");
        assertThat(backup.at("/spec/clusterName").asText()).isEqualTo(archiveName);
        assertThat(storages.has(backup.at("/spec/storageName").asText())).isTrue();
        assertThat(backup.at("/metadata/name").asText())
                .as("named after the backup point's request")
                .isEqualTo(read("backup-point.patch.yaml")
                        .get(0)
                        .at("/spec/backupPoint/request")
                        .asText());

        JsonNode restore = read("restore.yaml").get(0);
        assertThat(restore.path("kind").asText()).isEqualTo("PerconaServerMongoDBRestore");
        assertThat(restore.at("/spec/clusterName").asText()).isEqualTo(archiveName);
        assertThat(restore.at("/spec/backupName").asText())
                .isEqualTo(backup.at("/metadata/name").asText());
        assertThat(restore.at("/spec/pitr/type").asText()).isEqualTo("date");
        LocalDateTime.parse(restore.at("/spec/pitr/date").asText(), DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
    }

    @Test
    void theScheduledBackupPatchesTheClusterItMayPatchAndBacksUpTheArchive() throws IOException {
        String cluster = read("cluster.yaml").get(0).at("/metadata/name").asText();
        JsonNode archive = read("archive.yaml").get(0);
        List<JsonNode> docs = read("scheduled-backup.yaml");
        JsonNode role = docs.stream()
                .filter(d -> d.path("kind").asText().equals("Role"))
                .findFirst()
                .orElseThrow();
        assertThat(role.at("/rules/0/resourceNames/0").asText()).isEqualTo(cluster);
        JsonNode cronJob = docs.stream()
                .filter(d -> d.path("kind").asText().equals("CronJob"))
                .findFirst()
                .orElseThrow();
        String script = cronJob.at("/spec/jobTemplate/spec/template/spec/containers/0/command/2")
                .asText();
        assertThat(script)
                .contains("kubectl patch tc " + cluster + " ")
                .contains("tc/" + cluster + " --for=jsonpath='{.status.backupPoint.state}'=Reached")
                .contains("clusterName: " + archive.at("/metadata/name").asText())
                .contains("storageName: "
                        + archive.at("/spec/backup/storages").fieldNames().next());
        assertThat(script.indexOf("backupPoint.state}'=Reached"))
                .as("the point before the backup")
                .isLessThan(script.indexOf("kind: PerconaServerMongoDBBackup"));
    }

    /** The CRD's patterns of spec.backupPoint.request and spec.restore.name. */
    private static Map<String, String> patterns() throws IOException {
        CustomResourceDefinition crd = Serialization.unmarshal(Files.readString(CRD), CustomResourceDefinition.class);
        var spec = crd.getSpec()
                .getVersions()
                .get(0)
                .getSchema()
                .getOpenAPIV3Schema()
                .getProperties()
                .get("spec")
                .getProperties();
        return Map.of(
                "backupPoint.request",
                        spec.get("backupPoint").getProperties().get("request").getPattern(),
                "restore.name", spec.get("restore").getProperties().get("name").getPattern());
    }

    private static List<JsonNode> read(String file) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (var parser = YAML.getFactory().createParser(DIR.resolve(file).toFile())) {
            Iterator<JsonNode> it = YAML.readValues(parser, JsonNode.class);
            it.forEachRemaining(docs::add);
        }
        return docs;
    }

    /** A JSON merge patch (RFC 7386), as kubectl patch --type merge applies it. */
    private static void merge(ObjectNode target, JsonNode patch) {
        patch.fields().forEachRemaining(f -> {
            if (f.getValue().isObject() && target.get(f.getKey()) instanceof ObjectNode nested) {
                merge(nested, f.getValue());
            } else if (f.getValue().isNull()) {
                target.remove(f.getKey());
            } else {
                target.set(f.getKey(), f.getValue());
            }
        });
    }
}
