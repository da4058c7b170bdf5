package io.thermocline.operator.kit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.DefaultMockServer;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.zjsonpatch.JsonPatch;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The API server's validation of StatefulSet updates, which the CRUD mock lacks: an update (PUT or patch) that changes the spec
 * beyond the mutable fields is refused with 422 {@code Forbidden}, as the real one answers ("updates to statefulset spec for
 * fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and
 * 'minReadySeconds' are forbidden"), and the object stays as it was. Installed once per mock server, in front of its dispatcher.
 */
public final class ApiServerValidation extends Dispatcher {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern STATEFUL_SET =
            Pattern.compile("^/apis/apps/v1/namespaces/[^/]+/statefulsets/[^/?]+(\\?.*)?$");
    private static final Set<String> MUTABLE = Set.of(
            "replicas",
            "ordinals",
            "template",
            "updateStrategy",
            "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds");
    private static final String FORBIDDEN =
            "spec: Forbidden: updates to statefulset spec for fields other than 'replicas',"
                    + " 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

    private final Dispatcher delegate;
    private final List<String> refused = new CopyOnWriteArrayList<>();
    private final List<Counted> counted = new CopyOnWriteArrayList<>();

    private record Counted(Predicate<RecordedRequest> which, AtomicInteger count) {}

    private ApiServerValidation(Dispatcher delegate) {
        this.delegate = delegate;
    }

    /** Puts the validation in front of {@code server}'s dispatcher (once); the installed one. */
    public static synchronized ApiServerValidation install(KubernetesMockServer server) {
        try {
            Field dispatcherField = KubernetesMockServer.class.getDeclaredField("dispatcher");
            dispatcherField.setAccessible(true);
            Field webServerField = DefaultMockServer.class.getDeclaredField("server");
            webServerField.setAccessible(true);
            MockWebServer webServer = (MockWebServer) webServerField.get(server);
            Field current = MockWebServer.class.getDeclaredField("dispatcher");
            current.setAccessible(true);
            if (current.get(webServer) instanceof ApiServerValidation installed) {
                return installed;
            }
            ApiServerValidation validation = new ApiServerValidation((Dispatcher) dispatcherField.get(server));
            webServer.setDispatcher(validation);
            return validation;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the mock server's dispatcher cannot be wrapped", e);
        }
    }

    /** The paths of the updates refused so far. */
    public List<String> refused() {
        return refused;
    }

    /**
     * Counts, from now on, the requests {@code which} matches: a positive signal that the operator acted (a pass that
     * ended in a given Event, say) for a test that then checks what it did not do.
     */
    public AtomicInteger count(Predicate<RecordedRequest> which) {
        AtomicInteger count = new AtomicInteger();
        counted.add(new Counted(which, count));
        return count;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        for (Counted c : counted) {
            if (c.which().test(request)) {
                c.count().incrementAndGet();
            }
        }
        HttpMethod method = request.method();
        if ((method == HttpMethod.PUT || method == HttpMethod.PATCH)
                && STATEFUL_SET.matcher(request.getPath()).matches()) {
            String forbidden = forbidden(request);
            if (forbidden != null) {
                refused.add(request.getPath());
                return new MockResponse()
                        .setResponseCode(422)
                        .setHeader("Content-Type", "application/json")
                        .setBody(Serialization.asJson(new StatusBuilder()
                                .withStatus("Failure")
                                .withCode(422)
                                .withReason("Invalid")
                                .withMessage(forbidden)
                                .build()));
            }
        }
        return delegate.dispatch(request);
    }

    @Override
    public void shutdown() {
        delegate.shutdown();
    }

    private String forbidden(RecordedRequest request) {
        String path = request.getPath().replaceAll("\\?.*$", "");
        MockResponse current = delegate.dispatch(
                new RecordedRequest("HTTP/1.1", HttpMethod.GET, path, new Headers.Builder().build(), new Buffer()));
        if (current.code() != 200) {
            return null;
        }
        try {
            JsonNode before = JSON.readTree(current.getBody().readString(java.nio.charset.StandardCharsets.UTF_8));
            String body = body(request);
            String type = request.getHeader("Content-Type") == null ? "" : request.getHeader("Content-Type");
            JsonNode after;
            if (request.method() == HttpMethod.PUT) {
                after = JSON.readTree(body);
            } else if (type.contains("json-patch")) {
                after = JsonPatch.apply(JSON.readTree(body), before);
            } else { // a merge patch: what it sets under spec
                JsonNode patch = JSON.readTree(body);
                after = before.deepCopy();
                if (patch.has("spec")) {
                    ((ObjectNode) after.get("spec")).setAll((ObjectNode) patch.get("spec"));
                }
            }
            return immutable(before.get("spec")).equals(immutable(after.get("spec")))
                    ? null
                    : "StatefulSet.apps \"" + before.at("/metadata/name").asText() + "\" is invalid: " + FORBIDDEN;
        } catch (java.io.IOException | RuntimeException e) {
            return null; // not something this model judges: the mock decides
        }
    }

    private static JsonNode immutable(JsonNode spec) {
        ObjectNode copy = spec == null ? JSON.createObjectNode() : (ObjectNode) spec.deepCopy();
        copy.remove(MUTABLE);
        return copy;
    }

    /**
     * The request's body, left for the dispatcher behind this one ({@link RecordedRequest#getUtf8Body()} consumes it: the
     * mock would then store an empty update).
     */
    public static String body(RecordedRequest request) {
        return request.getBody() == null
                ? ""
                : new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
