package io.thermocline.operator.security;

import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;

/**
 * The security context of every pod the operator renders, so each is admitted under Pod
 * Security {@code restricted}: a fixed non-root user, no privilege escalation, no capabilities,
 * the runtime's default seccomp profile, and a read-only root filesystem with an emptyDir
 * wherever a process writes ({@code /tmp}: the JVM's perf data, Netty's native libraries,
 * mongod's init pid file and socket).
 */
public final class RestrictedPods {

    /** The data-plane image's user (Jib {@code <user>} in proxy-image/app). */
    public static final long DATA_PLANE_USER = 65532;
    /** The {@code mongodb} user and group of the official mongo images; owns {@code /data/db}. */
    public static final long MONGOD_USER = 999;
    public static final String TMP_VOLUME = "tmp";

    private RestrictedPods() {
    }

    /** Pod level: non-root user and group, seccomp; {@code fsGroup} makes the volumes writable by that group. */
    public static PodSecurityContext pod(long user, boolean ownsVolumes) {
        PodSecurityContextBuilder pod = new PodSecurityContextBuilder()
                .withRunAsNonRoot(true)
                .withRunAsUser(user)
                .withRunAsGroup(user)
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile();
        if (ownsVolumes) {
            // only when the volume's root is not the group's yet: a large data volume is not walked on every start
            pod.withFsGroup(user).withFsGroupChangePolicy("OnRootMismatch");
        }
        return pod.build();
    }

    /** Container level (Pod Security restricted checks these on every container, init containers too). */
    public static SecurityContext container() {
        return new SecurityContextBuilder()
                .withRunAsNonRoot(true)
                .withAllowPrivilegeEscalation(false)
                .withPrivileged(false)
                .withReadOnlyRootFilesystem(true)
                .withNewCapabilities().withDrop("ALL").endCapabilities()
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                .build();
    }

    public static Volume tmpVolume() {
        return new VolumeBuilder().withName(TMP_VOLUME).withNewEmptyDir().endEmptyDir().build();
    }

    public static VolumeMount tmpMount() {
        return new VolumeMountBuilder().withName(TMP_VOLUME).withMountPath("/tmp").build();
    }
}
