package io.thermocline.operator.status;

/** The condition types of a ThermoclineCluster's status. */
public enum ConditionType {
    Ready,
    ArchiveReachable,
    VersionCompatible,
    FastTierReady,
    ProxyReady,
    FeederHealthy,
    /** Whether the API server accepted every object as rendered (an immutable field, a refused value: not). */
    ResourcesApplied,
    /** Whether the warmer Job of the current windows completed (a failed one after its retries: False, WarmerFailed). */
    Warmed,
    /** Whether the fleet's active mode is the requested one (False: CutoverRefused, CuttingOver or Draining, with the reason). */
    ModeActive,
    /** Whether the archive alone is current again (mode draining, phase Drained): applications may go back to it. */
    Drained,
    /**
     * Whether the archive follower keeps the fast tier in step (reported only while the archive is authoritative:
     * Shadowing, CuttingOver, Drained; False: FollowerStopped, FollowerResyncing, FollowerBehind; does not change Ready).
     */
    FollowerHealthy,
    /**
     * Whether the fast tier's certificate is present, valid, names every member and is not about to expire (reported
     * only while the fast tier has TLS or is to get it; does not change Ready).
     */
    CertificatesReady,
    /**
     * The last backup point spec.backupPoint asked for (reported only once one was asked; False: Running, Refused,
     * TimedOut, Failed; does not change Ready).
     */
    BackupPointReached,
    /**
     * Whether a restore of the archive (spec.restore) holds the fleet (True: Holding, Held, Resyncing, Warming, Cancelling,
     * RestoreFailed; False: Restored, RestoreCancelled; reported only once one was asked; does not change Ready).
     */
    Restoring
}
