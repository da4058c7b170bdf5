package io.thermocline.benchmarks.tiering;

import java.util.List;
import java.util.Properties;

/** One of the prototype's operation mixes, as YCSB CoreWorkload properties. */
record Mix(String name, double read, double update, double insert, String distribution) {

    static final Mix STORE = new Mix("store", 0.85, 0.10, 0.05, "latest");
    static final Mix READ_HEAVY = new Mix("read-heavy", 0.95, 0.05, 0, "latest");
    static final Mix CONCENTRATED = new Mix("concentrated", 0.95, 0.05, 0, "hotspot");
    static final List<Mix> ALL = List.of(STORE, READ_HEAVY, CONCENTRATED);

    static Mix named(String name) {
        return ALL.stream().filter(m -> m.name.equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no mix " + name + "; one of store, read-heavy, concentrated"));
    }

    String describe() {
        String ops = String.format("%.0f/%.0f/%.0f read/update/insert", read * 100, update * 100, insert * 100);
        return ops + ", " + (distribution.equals("hotspot") ? "hotspot 99 % of operations on the newest 9 %" : "latest");
    }

    void applyTo(Properties p) {
        p.setProperty("readproportion", Double.toString(read));
        p.setProperty("updateproportion", Double.toString(update));
        p.setProperty("insertproportion", Double.toString(insert));
        p.setProperty("scanproportion", "0");
        p.setProperty("readmodifywriteproportion", "0");
        p.setProperty("requestdistribution", distribution);
        p.setProperty("hotspotdatafraction", "0.09");
        p.setProperty("hotspotopnfraction", "0.99");
        // the hot set is the low end of YCSB's key space: map it to the newest records
        p.setProperty(DatedWorkload.NEWEST_FIRST, Boolean.toString(distribution.equals("hotspot")));
    }
}
