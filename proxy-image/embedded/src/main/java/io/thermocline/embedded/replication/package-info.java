/** Roles, elections, rollback, secondaries applying the oplog, and waits for replication. */
package io.thermocline.embedded.replication;
