/**
 * An in-process MongoDB replica set for tests and the embedded default: {@link io.thermocline.embedded.EmbeddedReplicaSet}.
 * Storage and queries come from mongo-java-server; replica-set semantics (oplog, cluster time, replication,
 * elections, sessions, transactions, change streams) are implemented in the subpackages. See docs/embedded-replica-set.md.
 */
package io.thermocline.embedded;
