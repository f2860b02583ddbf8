#!/usr/bin/env bash
# The OpenMPI reference for `worker.jar bench allreduce`: MPI_Allreduce, float32 SUM, timed as Kolo's bench times
# its own (allreduce.c), on this machine, over loopback TCP (as Kolo with KOLO_SHM=false) or OpenMPI's
# shared-memory transport (vader, as Kolo's default between ranks of one host). One JSON line per size.
#
#   samples/peers/openmpi/run.sh [-np N] [--transport tcp|shm] [--sizes 4,4096,...] [--budget SECONDS]
#
# Needs OpenMPI (Debian: apt-get install openmpi-bin libopenmpi-dev; as root the script installs them).
# Ranks are not bound to cores (--bind-to none), as Kolo's workers are started by `launch`.
set -euo pipefail
np=2; transport=shm; sizes="4,4096,65536,1048576,4194304,16777216,67108864"; budget=1.0
while [ $# -gt 0 ]; do
  case "$1" in
    -np) np=$2; shift 2;;
    --transport) transport=$2; shift 2;;
    --sizes) sizes=$2; shift 2;;
    --budget) budget=$2; shift 2;;
    *) echo "run.sh: unknown argument '$1' (-np N, --transport tcp|shm, --sizes B,B,..., --budget SECONDS)" >&2; exit 2;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v mpicc >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openmpi-bin libopenmpi-dev) >&2
  else
    echo "run.sh: OpenMPI is missing: apt-get install openmpi-bin libopenmpi-dev" >&2; exit 2
  fi
fi
out="$here/../../target/peers"
mkdir -p "$out"
[ "$out/allreduce" -nt "$here/allreduce.c" ] || mpicc -O2 -o "$out/allreduce" "$here/allreduce.c"
case "$transport" in
  tcp) mca=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo);;
  shm) mca=(--mca pml ob1 --mca btl vader,self);;
  *) echo "run.sh: --transport is tcp or shm" >&2; exit 2;;
esac
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
exec timeout 900 mpirun "${root[@]}" --oversubscribe --bind-to none -np "$np" "${mca[@]}" \
  "$out/allreduce" --sizes "$sizes" --budget "$budget" --impl "openmpi-$transport"
