/** A member's wire front: Netty server, hello (including streaming), command dispatch, fail points. */
package io.thermocline.embedded.member;
