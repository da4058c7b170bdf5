#!/bin/bash
# A short profile of Thermocline's request path (docs/benchmarks/tiering.md, "Request-path CPU"): an
# archive (ArchiveMain, on disk, uncapped), TieredStackMain (fast tier in memory, feeder, evictor, proxy)
# and PointLoad (48 threads, 95/5 find/updateOne by _id on 20,000 fast-tier documents): 10 s warm-up,
# then 30 s under a JFR recording of TieredStackMain's process. Prints ops/s and that process's CPU.
# Build first, from the repository root:
#   mvn -q -ntp -Pbench -DskipTests -pl proxy-image/benchmarks -am package dependency:build-classpath -Dmdep.outputFile=/tmp/perf-cp.txt
# usage: proxy-image/benchmarks/profile-request-path.sh <label>   (writes /tmp/perfload/<label>.jfr and logs)
# then:  jfr print --stack-depth 300 --events jdk.ExecutionSample /tmp/perfload/<label>.jfr
set -e
L=$1; D=/tmp/perfload; mkdir -p $D
CP=$(cat /tmp/perf-cp.txt):$(cd "$(dirname "$0")" && pwd)/target/classes
rm -rf $D/archdir; mkdir -p $D/archdir
java -Xmx512m -cp "$CP" io.thermocline.benchmarks.tiering.ArchiveMain 27100 $D/archdir 100000 > $D/arch-$L.log 2>&1 &
APID=$!
for i in $(seq 60); do grep -q listening $D/arch-$L.log && break; sleep 1; done
java -Xmx2g -XX:FlightRecorderOptions:stackdepth=512 -cp "$CP" io.thermocline.benchmarks.tiering.TieredStackMain 27101 27102 \
  "mongodb://127.0.0.1:27100/?replicaSet=archive" false 27103 1000000 \
  "THERMOCLINE_COLLECTIONS=[{database: ycsb, collection: usertable, ageField: createdAt, hotWindow: 120d}]" \
  THERMOCLINE_TIERS_ARCHIVE_CONNECTION_BUDGET=64 > $D/stack-$L.log 2>&1 &
SPID=$!
for i in $(seq 90); do grep -q 'thermocline listening' $D/stack-$L.log && break; sleep 1; done
java -cp "$CP" io.thermocline.benchmarks.tiering.PointLoad mongodb://127.0.0.1:27101/ 48 10 20000 > $D/warm-$L.log 2>&1
T0=$(awk '{print $14+$15}' /proc/$SPID/stat)
jcmd $SPID JFR.start duration=30s filename=$D/$L.jfr settings=profile > /dev/null
java -cp "$CP" io.thermocline.benchmarks.tiering.PointLoad mongodb://127.0.0.1:27101/ 48 30 20000 noload > $D/load-$L.log 2>&1
T1=$(awk '{print $14+$15}' /proc/$SPID/stat)
sleep 3
echo "$L: $(tail -1 $D/load-$L.log) thermocline_cpu_s=$(( (T1-T0) / 100 ))"
kill $SPID; wait $SPID 2>/dev/null || true
kill $APID; wait $APID 2>/dev/null || true
