/** Change streams over the oplog: scopes, options, resume tokens, event shapes, cursors. */
package io.thermocline.embedded.changestream;
