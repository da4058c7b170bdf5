/**
 * A member's wire front: Netty server, hello (including streaming), fail points, and its commands: the dispatcher, reads,
 * writes, transactions and write concern.
 */
package io.thermocline.embedded.member;
