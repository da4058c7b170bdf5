#!/bin/sh
# Runs the tiering benchmark with CPU priority over the rest of the machine (other builds on a shared
# machine), from the repository root, as root: the shell joins a cpu cgroup of its own with the highest
# weight (v2 cpu.weight 10000, or v1 cpu.shares 262144) and execs Maven; the benchmark, the archive and
# Thermocline's process inherit it (the archive's memory/io group is a separate hierarchy on v1, and on
# v2 the archive's group is created beside it by the benchmark).
# usage: proxy-image/benchmarks/run-tiering.sh [key=value ...]   (the benchmark's arguments)
# BENCH_MAIN=<class> runs another benchmark the same way (the disk-bound secondary reads: io.thermocline.benchmarks.secondaries.DiskBoundSecondaryReads)
set -e
NAME=thermocline-bench-cpu
if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.shares ]; then
    G=/sys/fs/cgroup/cpu/$NAME
    mkdir -p "$G" && echo 262144 > "$G/cpu.shares"
else
    ROOT=/sys/fs/cgroup
    [ -f "$ROOT/cgroup.controllers" ] || ROOT=/sys/fs/cgroup/unified
    echo +cpu > "$ROOT/cgroup.subtree_control"
    G=$ROOT/$NAME
    mkdir -p "$G" && echo 10000 > "$G/cpu.weight"
fi
echo $$ > "$G/cgroup.procs"
exec mvn -q -ntp -Pbench -DskipTests -pl proxy-image/benchmarks -am verify \
    -Dbench.main=${BENCH_MAIN:-io.thermocline.benchmarks.tiering.TieringBenchmark} -Dbench.args="$*"
