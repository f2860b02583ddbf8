#!/usr/bin/env bash
# The OpenMPI reference across hosts, placed as `worker.jar bench allreduce -np N --hosts H [--link-rate RATE]`
# places Kolo's ranks: H network namespaces of this machine on one bridge (addresses 10.79.X.1..H), each limited
# to sending RATE (tc tbf on its link, burst 4mb, latency 100ms, as the bench does), N / H consecutive ranks per
# host. Ranks of a host talk through OpenMPI's shared memory (vader), hosts over TCP. mpirun runs in the first
# host and starts its daemons in the others through `ip netns exec` (its rsh agent is this script), each host with
# a hostname of its own. One JSON line per size, as run.sh. Root only.
#
#   samples/peers/openmpi/run-hosts.sh -np N --hosts H [--link-rate RATE] [--sizes 4,4096,...] [--budget SECONDS]
set -euo pipefail
if [ "${1:-}" = "--agent" ]; then
  # mpirun's rsh agent: "--agent HOST COMMAND...": the command in the host's namespace, under the host's name.
  host=$2; shift 2
  ns=$(cat "$KOLO_PEER_HOSTS_DIR/$host")
  exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns; $*"
fi
np=2; hosts=2; rate=""; sizes="4,4096,65536,1048576,4194304,16777216,67108864"; budget=1.0
while [ $# -gt 0 ]; do
  case "$1" in
    -np) np=$2; shift 2;;
    --hosts) hosts=$2; shift 2;;
    --link-rate) rate=$2; shift 2;;
    --sizes) sizes=$2; shift 2;;
    --budget) budget=$2; shift 2;;
    *) echo "run-hosts.sh: unknown argument '$1' (-np N, --hosts H, --link-rate RATE, --sizes B,B,..., --budget S)" >&2
       exit 2;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "run-hosts.sh: network namespaces need root" >&2; exit 2; }
[ "$hosts" -ge 2 ] && [ $((np % hosts)) -eq 0 ] || { echo "run-hosts.sh: --hosts must be 2 or more and divide -np" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
"$here/run.sh" -np 1 --sizes 4 --budget 0.01 > /dev/null  # installs OpenMPI if missing and builds the reference
binary="$here/../../target/peers/allreduce"
run=$$; subnet=$(( (run % 200) + 20 )); bridge=kpb$run
dir=$(mktemp -d); export KOLO_PEER_HOSTS_DIR=$dir
cleanup() {
  for i in $(seq 0 $((hosts - 1))); do ip link del kpv$run-$i 2>/dev/null || true; ip netns del kpeer$run-$i 2>/dev/null || true; done
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
ip link add "$bridge" type bridge && ip link set "$bridge" up
list=""
for i in $(seq 0 $((hosts - 1))); do
  ns=kpeer$run-$i; addr=10.79.$subnet.$((i + 1))
  ip netns add "$ns"
  ip link add kpv$run-$i type veth peer name eth0 netns "$ns"
  ip link set kpv$run-$i master "$bridge" up
  ip -n "$ns" addr add "$addr/24" dev eth0 && ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up
  [ -z "$rate" ] || ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 4mb latency 100ms
  echo "$ns" > "$dir/$addr"
  list="$list${list:+,}$addr:$((np / hosts))"
done
first=$(cat "$dir/10.79.$subnet.1")
# Ranks that outnumber this machine's cores yield when they poll, as Kolo's do; spinning, each would hold a core
# for a whole time slice while the rank it waits for cannot run.
yield=0; [ "$np" -gt "$(nproc)" ] && yield=1
timeout 900 ip netns exec "$first" unshare --uts sh -c "hostname $first; exec mpirun --allow-run-as-root \
  --oversubscribe --bind-to none -np $np --host $list -x KOLO_PEER_HOSTS_DIR \
  --mca plm_rsh_agent '$here/run-hosts.sh --agent' --mca pml ob1 --mca btl vader,tcp,self --mca mpi_yield_when_idle $yield \
  --mca btl_tcp_if_include 10.79.$subnet.0/24 --mca oob_tcp_if_include 10.79.$subnet.0/24 \
  '$binary' --sizes $sizes --budget $budget --impl openmpi-hosts"
