/** Write commands executed statement by statement on the primary, reporting each changed document. */
package io.thermocline.embedded.write;
