package io.thermocline.operator.archive;

import io.thermocline.operator.api.v1alpha1.FastTierSpec;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Which MongoDB version the fast tier runs, and whether that works with the archive. A pure function. */
public final class VersionPolicy {

    /** The proxy needs wire version 9+ on both tiers (MongoDB 4.4): older archives are refused. */
    static final int MIN_MAJOR = 4;
    static final int MIN_MINOR = 4;
    private static final Pattern VERSION = Pattern.compile("^(\\d+)\\.(\\d+)\\.(\\d+).*");

    private VersionPolicy() {
    }

    /** The outcome: compatible or not, the fast tier's version (null when none can be chosen), a reason and a message. */
    public record VersionDecision(boolean compatible, String fastTierVersion, String reason, String message) {
    }

    public static VersionDecision decide(FastTierSpec spec, String archiveVersion) {
        Matcher archive = VERSION.matcher(archiveVersion == null ? "" : archiveVersion);
        if (!archive.matches()) {
            return new VersionDecision(false, null, "UnknownArchiveVersion",
                    "the archive reported version '" + archiveVersion + "', which is not x.y.z; pin spec.fastTier.version");
        }
        int major = Integer.parseInt(archive.group(1));
        int minor = Integer.parseInt(archive.group(2));
        if (major < MIN_MAJOR || (major == MIN_MAJOR && minor < MIN_MINOR)) {
            return new VersionDecision(false, null, "ArchiveTooOld",
                    "the archive runs MongoDB " + archiveVersion + "; Thermocline needs 4.4 or newer: upgrade the archive first");
        }
        String exact = archive.group(1) + "." + archive.group(2) + "." + archive.group(3);
        if (spec.automaticVersion()) {
            return new VersionDecision(true, exact, "MatchesArchive", "the fast tier runs the archive's version " + exact);
        }
        Matcher pinned = VERSION.matcher(spec.version);
        if (!pinned.matches()) {
            return new VersionDecision(false, null, "InvalidPinnedVersion",
                    "spec.fastTier.version '" + spec.version + "' is not x.y.z or auto");
        }
        if (!pinned.group(1).equals(archive.group(1)) || !pinned.group(2).equals(archive.group(2))) {
            return new VersionDecision(false, null, "Mismatch",
                    "spec.fastTier.version " + spec.version + " differs from the archive's " + exact
                            + " in major.minor; pin a " + major + "." + minor + ".x version or set auto");
        }
        return new VersionDecision(true, spec.version, "Pinned",
                "the fast tier is pinned to " + spec.version + " (archive " + exact + ")");
    }
}
