package io.thermocline.proxy.topology;

import java.util.Locale;

/** The two replica sets behind the proxy. In pass-through mode only the archive exists. */
public enum Tier {
    FAST, ARCHIVE;

    /** Lower-case name used in metrics labels and logs. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
