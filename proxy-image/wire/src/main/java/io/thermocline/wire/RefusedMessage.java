package io.thermocline.wire;

/**
 * A well-framed message the {@link MessageBudget} refused: its bytes were skipped, never buffered nor inflated, so only
 * its header is known. The connection stays in sync and answers it in turn with {@code reason}.
 *
 * @param moreToCome the sender set OP_MSG's moreToCome and expects no reply (unknown, so false, for OP_COMPRESSED)
 * @param bytes      the frame's length, and what it inflates to when that was what did not fit
 */
public record RefusedMessage(int requestId, int opCode, boolean moreToCome, long bytes, String reason) {}
