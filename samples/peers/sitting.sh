#!/usr/bin/env bash
# One sitting of interleaved runs: `bench allreduce` of each Kolo build given, then the OpenMPI reference, run after
# run, N times; then each size's median, slowest run and slowest/fastest per build, and Kolo's against OpenMPI's.
# Before each run the placement probe (probes/placement.c) times a cache line's round trip between CPUs 0 and 1, so
# that a slow run can be told from a slow placement of the machine's virtual CPUs.
#
#   samples/peers/sitting.sh [-np N] [--runs R] [--transport shm|tcp] [--out DIR] NAME=WORKER_JAR [NAME=WORKER_JAR ...]
#
# Example: samples/peers/sitting.sh -np 2 --runs 5 new=samples/target/worker.jar
set -euo pipefail
np=2; runs=5; transport=shm; out=target/sitting-$(date +%Y%m%d-%H%M%S); builds=()
while [ $# -gt 0 ]; do
  case "$1" in
    -np) np=$2; shift 2;;
    --runs) runs=$2; shift 2;;
    --transport) transport=$2; shift 2;;
    --out) out=$2; shift 2;;
    *=*) builds+=("$1"); shift;;
    *) echo "sitting.sh: unknown argument '$1' (-np N, --runs R, --transport shm|tcp, --out DIR, NAME=JAR)" >&2; exit 2;;
  esac
done
[ ${#builds[@]} -gt 0 ] || { echo "sitting.sh: give at least one NAME=WORKER_JAR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
probe="$here/../target/peers/placement"
mkdir -p "$(dirname "$probe")"
[ "$probe" -nt "$here/probes/placement.c" ] || gcc -O2 -o "$probe" "$here/probes/placement.c"
shm=true; [ "$transport" = tcp ] && shm=false
sizes=4,16,64,256,1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864
for i in $(seq 1 "$runs"); do
  for b in "${builds[@]}"; do
    name=${b%%=*}; jar=${b#*=}
    echo "$name $i round_trip_ns=$("$probe")" >> "$out/placement"
    KOLO_SHM=$shm java -jar "$jar" bench allreduce -np "$np" --json --no-fused-step --budget 0.5 \
      --max-bytes 67108864 > "$out/$name-$i.json" 2> "$out/$name-$i.err"
  done
  echo "openmpi $i round_trip_ns=$("$probe")" >> "$out/placement"
  "$here/openmpi/run.sh" -np "$np" --transport "$transport" --budget 0.5 --sizes "$sizes" \
    > "$out/openmpi-$i.json" 2> "$out/openmpi-$i.err"
done
python3 "$here/sitting_table.py" "$out"
