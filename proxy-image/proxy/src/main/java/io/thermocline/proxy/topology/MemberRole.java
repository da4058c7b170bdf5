package io.thermocline.proxy.topology;

/** What a backend member said it is in its last hello reply. */
public enum MemberRole {
    PRIMARY, SECONDARY, ARBITER, STANDALONE, MONGOS, OTHER, UNKNOWN;

    /** Members that hold data and can serve reads. */
    public boolean dataBearing() {
        return this == PRIMARY || this == SECONDARY || this == STANDALONE || this == MONGOS;
    }

    /** Members that accept writes. */
    public boolean writable() {
        return this == PRIMARY || this == STANDALONE || this == MONGOS;
    }
}
