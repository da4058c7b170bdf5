package io.thermocline.tiering.metadata;

import java.time.Instant;

/** The evictor's last complete pass over one collection. */
public record EvictorPass(Instant completedAt, Instant cutoff, long evicted, long keptForFeeder, long keptArchiveDiffers) {
}
