/** A member's storage engine (mongo-java-server memory or H2 backend) behind an org.bson interface. */
package io.thermocline.embedded.storage;
