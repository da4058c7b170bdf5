package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** The tiering policy of one collection. */
public class CollectionSpec {

    @Required
    @Size(min = 1, max = 63)
    @Pattern("^[^/\\\\. \"$*<>:|?]+$")
    @JsonPropertyDescription("Database name.")
    public String database;

    @Required
    @Size(min = 1, max = 200)
    @Pattern("^[^$\\x00]+$")
    @JsonPropertyDescription("Collection name.")
    public String collection;

    @Size(min = 1, max = 200)
    @Pattern("^[^$.][^$]*$")
    @Default("_id")
    @JsonPropertyDescription("Date field that ages a document, or _id for the ObjectId's time.")
    public String ageField = "_id";

    @Required
    @Pattern("^[1-9][0-9]*(ms|s|m|h|d|w)$")
    @JsonPropertyDescription("How long a document stays in the fast tier, e.g. 30d, 12h, 90m.")
    public String hotWindow;

    @Pattern("^(primary|offload)$")
    @Default("primary")
    @JsonPropertyDescription("Whether archive-routed reads the client sends to the primary may be served by archive"
            + " secondaries: 'primary' (as the client asked; the default) or 'offload' (any archive member that has applied"
            + " what the read must see, the primary when none has). The data plane's collections[].secondaryReads.")
    public String secondaryReads = "primary";

    public CollectionSpec() {
    }

    public CollectionSpec(String database, String collection, String ageField, String hotWindow) {
        this.database = database;
        this.collection = collection;
        this.ageField = ageField;
        this.hotWindow = hotWindow;
    }
}
