package io.thermocline.operator.archive;

import io.thermocline.operator.api.v1alpha1.FastTierSpec;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which MongoDB version the fast tier runs, and whether that works with the archive and with
 * what the fast tier runs now. MongoDB upgrades one release series at a time (4.4, 5.0, 6.0,
 * 7.0, 8.0) and never downgrades past its featureCompatibilityVersion: a skipped series or a
 * downgrade below the FCV is refused, and the fast tier keeps its running version; a binary rollback
 * to the FCV's series is allowed. A pure function.
 */
public final class VersionPolicy {

    /** The proxy needs wire version 9+ on both tiers (MongoDB 4.4): older archives are refused. */
    static final int MIN_MAJOR = 4;
    static final int MIN_MINOR = 4;
    private static final Pattern VERSION = Pattern.compile("^(\\d+)\\.(\\d+)(\\.(\\d+))?.*");

    private VersionPolicy() {
    }

    /**
     * The outcome: compatible or not, the version the fast tier is to run (null when none can be
     * chosen; the running one when a change is refused), a CamelCase reason and a message.
     */
    public record VersionDecision(boolean compatible, String fastTierVersion, String reason, String message) {
    }

    /** For a new fast tier. */
    public static VersionDecision decide(FastTierSpec spec, String archiveVersion) {
        return decide(spec, archiveVersion, null, null);
    }

    /**
     * @param running the version the fast tier's pods are set to run now (null: none yet)
     * @param fcv     its featureCompatibilityVersion (null: not known)
     */
    public static VersionDecision decide(FastTierSpec spec, String archiveVersion, String running, String fcv) {
        Matcher archive = VERSION.matcher(archiveVersion == null ? "" : archiveVersion);
        if (!archive.matches() || archive.group(4) == null) {
            return refuse(running, "UnknownArchiveVersion",
                    "the archive reported version '" + archiveVersion + "', which is not x.y.z; pin spec.fastTier.version");
        }
        int major = Integer.parseInt(archive.group(1));
        int minor = Integer.parseInt(archive.group(2));
        if (major < MIN_MAJOR || (major == MIN_MAJOR && minor < MIN_MINOR)) {
            return refuse(running, "ArchiveTooOld",
                    "the archive runs MongoDB " + archiveVersion + "; Thermocline needs 4.4 or newer: upgrade the archive first");
        }
        String exact = archive.group(1) + "." + archive.group(2) + "." + archive.group(4);
        String archiveSeries = series(exact);
        String wanted;
        String reason;
        String message;
        if (spec.automaticVersion()) {
            wanted = exact;
            reason = "MatchesArchive";
            message = "the fast tier runs the archive's version " + exact;
        } else {
            Matcher pinned = VERSION.matcher(spec.version);
            if (!pinned.matches() || pinned.group(4) == null) {
                return refuse(running, "InvalidPinnedVersion", "spec.fastTier.version '" + spec.version + "' is not x.y.z or auto");
            }
            // a pin between the running series and the archive's is an upgrade step towards the archive
            boolean step = running != null && compareSeries(series(spec.version), archiveSeries) < 0
                    && compareSeries(series(spec.version), series(running)) >= 0;
            if (!series(spec.version).equals(archiveSeries) && !step) {
                return refuse(running, "Mismatch", "spec.fastTier.version " + spec.version + " differs from the archive's " + exact
                        + " in major.minor; pin a " + archiveSeries + ".x version or set auto");
            }
            wanted = spec.version;
            reason = "Pinned";
            message = "the fast tier is pinned to " + spec.version + " (archive " + exact + ")";
        }
        if (running != null && series(running) != null) {
            String from = fcv != null && compareSeries(fcv, series(running)) < 0 ? fcv : series(running);
            // a binary goes back as far as the featureCompatibilityVersion, never below it
            if (compareSeries(series(wanted), series(running)) < 0 && (fcv == null || compareSeries(series(wanted), fcv) < 0)) {
                return refuse(running, "DowngradeRefused", "the fast tier runs " + running + " with featureCompatibilityVersion "
                        + (fcv == null ? "unknown" : fcv) + "; MongoDB cannot run " + wanted + " on data whose featureCompatibilityVersion"
                        + " is newer: pin spec.fastTier.version to a " + (fcv == null ? series(running) : fcv)
                        + ".x release (or upgrade the archive back)");
            }
            if (!withinOneUpgrade(from, series(wanted))) {
                boolean fcvBehind = fcv != null && compareSeries(fcv, series(running)) < 0;
                return refuse(running, "SkippedMajorVersion", "the fast tier runs " + running + " (featureCompatibilityVersion "
                        + (fcv == null ? "unknown" : fcv) + ") and MongoDB upgrades one release series at a time, so it cannot"
                        + " go to " + wanted + " directly: " + (fcvBehind
                                ? "set spec.fastTier.featureCompatibilityVersion: \"" + series(running) + "\" first (a binary rollback"
                                        + " to " + fcv + " is impossible after it), wait for Ready, then upgrade"
                                : "pin spec.fastTier.version to a " + nextSeries(from) + ".x release, wait for Ready, then set auto (or the next pin)"));
            }
            String wantedFcv = wantedFeatureCompatibilityVersion(spec, wanted);
            if (wantedFcv != null && fcv != null && compareSeries(wantedFcv, fcv) < 0) {
                return refuse(running, "FeatureCompatibilityVersionLowering", "spec.fastTier.featureCompatibilityVersion "
                        + wantedFcv + " is below the fast tier's " + fcv + ": the operator only raises it; fix the field to " + fcv
                        + " or later (lowering it is MongoDB's setFeatureCompatibilityVersion, run by hand)");
            }
        }
        String wantedFcv = wantedFeatureCompatibilityVersion(spec, wanted);
        if (wantedFcv != null && compareSeries(wantedFcv, series(wanted)) > 0) {
            return refuse(running, "FeatureCompatibilityVersionAboveBinary", "spec.fastTier.featureCompatibilityVersion "
                    + wantedFcv + " is newer than the binary " + wanted + ": fix it to " + series(wanted) + " or lower");
        }
        return new VersionDecision(true, wanted, reason, message);
    }

    /** The featureCompatibilityVersion the spec asks for with the fast tier running {@code version}: null leaves it where it is. */
    public static String wantedFeatureCompatibilityVersion(FastTierSpec spec, String version) {
        String asked = spec.featureCompatibilityVersion;
        if (asked == null || asked.isBlank()) {
            return null;
        }
        return FastTierSpec.AUTOMATIC_VERSION.equals(asked) ? series(version) : asked;
    }

    /** "7.0" of "7.0.14"; null when not a version. */
    public static String series(String version) {
        Matcher m = VERSION.matcher(version == null ? "" : version);
        return m.matches() ? m.group(1) + "." + m.group(2) : null;
    }

    /** Orders release series ("6.0" < "7.0" < "7.1"); a null or unparsable one is the lowest. */
    public static int compareSeries(String a, String b) {
        return Long.compare(rank(a), rank(b));
    }

    /** From {@code from} to {@code to} in at most one upgrade: same series, a later minor of the same major, or the next major's .0. */
    public static boolean withinOneUpgrade(String from, String to) {
        if (compareSeries(to, from) <= 0) {
            return true;
        }
        int[] f = parts(from);
        int[] t = parts(to);
        return t[0] == f[0] || (t[0] == f[0] + 1 && t[1] == 0);
    }

    private static String nextSeries(String from) {
        return (parts(from)[0] + 1) + ".0";
    }

    private static VersionDecision refuse(String running, String reason, String message) {
        return new VersionDecision(false, running, reason, message);
    }

    private static long rank(String series) {
        int[] p = parts(series);
        return p[0] * 1000L + p[1];
    }

    private static int[] parts(String version) {
        Matcher m = VERSION.matcher(version == null ? "" : version);
        return m.matches() ? new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))} : new int[] {-1, 0};
    }
}
