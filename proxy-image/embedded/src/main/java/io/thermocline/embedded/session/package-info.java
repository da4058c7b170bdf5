/** Logical sessions: retryable-write records and multi-document transactions. */
package io.thermocline.embedded.session;
