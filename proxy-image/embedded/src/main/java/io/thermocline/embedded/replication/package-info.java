/**
 * Roles, elections, rollback, secondaries applying the oplog, the majority commit point, waits for replication, writes
 * between storage and oplog, and initial sync.
 */
package io.thermocline.embedded.replication;
