/** The oplog (indexed by position, bounded, optionally on disk), its entries and the hybrid logical clock. */
package io.thermocline.embedded.oplog;
