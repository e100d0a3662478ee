#!/usr/bin/env bash
# The README's Slurm recipe, run for real: a one-node Slurm cluster on this machine (munged,
# slurmctld, slurmd on loopback, everything under one temporary folder), the job-array file
# scripts/slurm-array.sbatch submitted as four array tasks over a generated fleet archive with
# planted faults, then `faultline merge`; checks that the merged fleet line equals the unsharded
# scan's, that the shards hold every bundle exactly once, and that every planted fault is found.
# The cluster runs scripts/slurm-epilog.sh as its Epilog: the array's tasks succeed and leave no
# bundle; then a job that fails with a CUDA error in its output leaves
# bundles/job-<id>-<node>.tar.zst, and `faultline scan bundles/` reports that error.
#
#   scripts/slurm-e2e.sh [FAULTLINE_BIN [GENFLEET_BIN]]
#
# Defaults: target/fast/faultline and target/fast/examples/genfleet (under $CARGO_TARGET_DIR
# when set), built with `cargo build --profile fast` when missing. Env: E2E_NODES (300),
# E2E_KIB (16), E2E_TASKS (4), E2E_TIMEOUT (seconds to wait for the array, 300),
# E2E_NO_INSTALL=1 (never apt-get).
#
# Exit status: 0 passed; 1 failed; 77 skipped (not root, or the Debian packages slurmctld,
# slurmd, slurm-client and munge could not be installed). Once the packages are there, any
# failure of the cluster or of the recipe is a failure. Daemons are stopped by their pids on
# exit; nothing outside the temporary folder is written (no /etc/munge, no /etc/slurm).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
say() { echo "slurm-e2e: $*"; }
skip() {
  say "SKIPPED: $*"
  exit 77
}
fail() {
  say "FAILED: $*"
  exit 1
}

target=${CARGO_TARGET_DIR:-target}
faultline=${1:-$target/fast/faultline}
genfleet=${2:-$target/fast/examples/genfleet}
nodes=${E2E_NODES:-300}
kib=${E2E_KIB:-16}
tasks=${E2E_TASKS:-4}
wait_max=${E2E_TIMEOUT:-300}

[ "$(id -u)" = 0 ] || skip "needs root (the daemons run as root here)"

# --- the packages -------------------------------------------------------------------------
have_slurm() {
  command -v slurmctld && command -v slurmd && command -v sbatch && command -v squeue &&
    command -v scontrol && command -v sinfo && command -v munged
} >/dev/null 2>&1
if ! have_slurm; then
  [ "${E2E_NO_INSTALL:-0}" = 1 ] && skip "Slurm or munge not installed (E2E_NO_INSTALL=1)"
  command -v apt-get >/dev/null 2>&1 || skip "Slurm or munge not installed, and no apt-get"
  say "installing slurmctld slurmd slurm-client munge from Debian"
  export DEBIAN_FRONTEND=noninteractive
  pkgs=(slurmctld slurmd slurm-client munge)
  if ! timeout 300 apt-get install -y -qq "${pkgs[@]}" >/tmp/slurm-e2e-apt.log 2>&1; then
    timeout 180 apt-get update -qq >>/tmp/slurm-e2e-apt.log 2>&1 || true
    timeout 300 apt-get install -y -qq "${pkgs[@]}" >>/tmp/slurm-e2e-apt.log 2>&1 ||
      { tail -5 /tmp/slurm-e2e-apt.log; skip "apt-get install ${pkgs[*]} failed (log: /tmp/slurm-e2e-apt.log)"; }
  fi
  have_slurm || skip "the Slurm packages installed but their commands are missing"
  say "packages installed in $((SECONDS - start)) s"
fi

# --- the binaries -------------------------------------------------------------------------
if [ ! -x "$faultline" ] || [ ! -x "$genfleet" ]; then
  say "building faultline and genfleet (profile fast)"
  cargo build --quiet --profile fast --bin faultline --example genfleet
fi
faultline=$(realpath "$faultline")
genfleet=$(realpath "$genfleet")

# --- the cluster --------------------------------------------------------------------------
tmp=$(mktemp -d /tmp/faultline-slurm-e2e.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
  local rc=$?
  # stop what this script started, by pid, newest first; wait at most 10 s for each
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    local p=${pids[i]}
    kill "$p" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    for f in "$tmp"/*.log "$tmp"/log/*.out; do
      [ -f "$f" ] && { echo "--- $f (last lines)"; tail -15 "$f"; }
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

host=$(hostname -s)
# loopback ports, per run, so that two runs on one machine do not meet
port=$((20000 + ($$ % 10000) * 2))
mem=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
cpus=$(nproc)
mkdir -p "$tmp"/{state,spool,log,results}
head -c 1024 /dev/urandom >"$tmp/munge.key"
chmod 400 "$tmp/munge.key"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=faultline-e2e
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SchedulerType=sched/builtin
Epilog=$tmp/epilog.sh
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=e2e Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:$tasks
EOF
export SLURM_CONF=$tmp/slurm.conf
# the Epilog of docs/collect.md: scripts/slurm-epilog.sh with this run's binary and folders
cat >"$tmp/epilog.sh" <<EOF
#!/bin/bash
export FAULTLINE_BIN=$faultline FAULTLINE_EPILOG_DIR=$tmp/bundles FAULTLINE_EPILOG_LOG=$tmp/epilog.log
env | grep -E '^SLURM' | sort >"$tmp/epilog-env.\${SLURM_JOB_ID:-none}"
exec bash $(realpath scripts/slurm-epilog.sh)
EOF
chmod 755 "$tmp/epilog.sh"

munged -F --key-file="$tmp/munge.key" --socket="$tmp/munge.socket" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" >"$tmp/munged.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge.socket" ] && break; sleep 0.2; done
[ -S "$tmp/munge.socket" ] || fail "munged did not start"
slurmctld -D -c -f "$SLURM_CONF" >"$tmp/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/slurmd.out.log" 2>&1 &
pids+=($!)
up=
for _ in $(seq 120); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  # exact states: `idle*` (with the star) is a node that does not respond
  case "$state" in idle|mixed|allocated) up=1; break ;; esac
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || fail "a daemon exited (pid $p)"; done
  sleep 0.5
done
[ -n "$up" ] || fail "the node did not become idle within 60 s (state: ${state:-none})"
say "cluster up in $((SECONDS - start)) s: node $host, $cpus CPU(s), ports $port/$((port + 1))"

# --- the recipe ---------------------------------------------------------------------------
archive=$tmp/archive
"$genfleet" "$archive" "$nodes" "$kib" >"$tmp/genfleet.out"
grep '^planted: ' "$tmp/genfleet.out" | sort -u >"$tmp/planted"
say "$(tail -1 "$tmp/genfleet.out"); $(wc -l <"$tmp/planted") planted fault(s)"
t0=$SECONDS
job=$(sbatch --parsable --array=0-$((tasks - 1)) --cpus-per-task=1 --mem=256M \
  --output="$tmp/log/scan-%a.out" \
  --export=ALL,FAULTLINE="$faultline",FAULTLINE_ARCHIVE="$archive",FAULTLINE_RESULTS="$tmp/results" \
  scripts/slurm-array.sbatch)
job=${job%%;*}
say "submitted job array $job (tasks 0-$((tasks - 1)))"
done_=
while [ $((SECONDS - t0)) -lt "$wait_max" ]; do
  if [ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; then done_=1; break; fi
  sleep 1
done
[ -n "$done_" ] || fail "the array was not done within $wait_max s: $(squeue -h -j "$job" -o '%i %T %r' | tr '\n' ' ')"
states=$(scontrol -o show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr -s ' \n' ' ')
say "array done in $((SECONDS - t0)) s:${states}"
bad=$(scontrol -o show job "$job" | grep -v 'JobState=COMPLETED' |
  grep -oE 'ArrayTaskId=[0-9]+|JobState=[A-Z_]+|ExitCode=[0-9:]+' | paste -sd ' ' || true)
[ -z "$bad" ] || fail "array tasks not COMPLETED: $bad"

# --- the checks ---------------------------------------------------------------------------
shards=()
for k in $(seq 0 $((tasks - 1))); do
  f=$tmp/results/shard-$k.jsonl
  [ -s "$f" ] || fail "task $k wrote no $f"
  grep -q "\"shard\":\"$k/$tasks\"" "$f" || fail "$f has no fleet line of shard $k/$tasks"
  shards+=("$f")
done
"$faultline" merge --quiet -o "$tmp/merged.jsonl" "${shards[@]}" 2>"$tmp/merge.err" ||
  fail "faultline merge failed: $(cat "$tmp/merge.err")"
[ ! -s "$tmp/merge.err" ] || fail "merge warned: $(cat "$tmp/merge.err")"
"$faultline" scan --quiet -o "$tmp/full.jsonl" "$archive"
tail -n 1 "$tmp/full.jsonl" | cmp -s - "$tmp/merged.jsonl" ||
  fail "merged fleet line differs from the unsharded scan: $(diff <(tail -n 1 "$tmp/full.jsonl" | tr ',' '\n') <(tr ',' '\n' <"$tmp/merged.jsonl") | head -20)"
for f in "${shards[@]}"; do sed '$d' "$f"; done | sort >"$tmp/shard-lines"
sed '$d' "$tmp/full.jsonl" | sort >"$tmp/full-lines"
cmp -s "$tmp/shard-lines" "$tmp/full-lines" || fail "the shards' bundle lines are not the unsharded scan's, each once"
bundles=$(wc -l <"$tmp/full-lines")
missed=0
while read -r _ h code; do
  if ! grep -F "\"host\":\"$h\"" "$tmp/full-lines" | grep -qF "\"$code\":"; then
    say "planted fault not found: $h $code"
    missed=$((missed + 1))
  fi
done <"$tmp/planted"
[ "$missed" = 0 ] || fail "$missed planted fault(s) not found"
# --- the epilog: a failed job leaves a bundle, and scan finds its fault ----------------------
if [ -d "$tmp/bundles" ] && [ -n "$(ls -A "$tmp/bundles")" ]; then
  fail "the epilog captured jobs that succeeded: $(ls "$tmp/bundles" | tr '\n' ' ')"
fi
t0=$SECONDS
cat >"$tmp/fail.sbatch" <<'EOF'
#!/bin/bash
echo '[rank0]: Traceback (most recent call last):'
echo '[rank0]:   File "/workspace/train.py", line 88, in <module>'
echo '[rank0]:     loss.backward()'
echo '[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered'
exit 1
EOF
fjob=$(sbatch --parsable --cpus-per-task=1 --mem=64M --output="$tmp/log/fail-%j.out" "$tmp/fail.sbatch")
fjob=${fjob%%;*}
bundle=$tmp/bundles/job-$fjob-$host.tar.zst
for _ in $(seq 120); do [ -s "$bundle" ] && break; sleep 0.5; done
[ -s "$bundle" ] || fail "the epilog wrote no $bundle (epilog log: $(cat "$tmp/epilog.log" 2>/dev/null); env: $(tr '\n' ' ' <"$tmp/epilog-env.$fjob" 2>/dev/null))"
say "epilog environment: $(grep -oE '^SLURM_JOB_(EXIT_CODE2?|DERIVED_EC|STDOUT|STDERR|UID)=[^ ]*' "$tmp/epilog-env.$fjob" | tr '\n' ' ')"
"$faultline" scan --quiet --format jsonl -o "$tmp/epilog-scan.jsonl" "$tmp/bundles"
head -n 1 "$tmp/epilog-scan.jsonl" | grep -qF '"cuda_error:700":' ||
  fail "the scan of the epilog's bundle does not report the job's CUDA error: $(head -c 600 "$tmp/epilog-scan.jsonl")"
head -n 1 "$tmp/epilog-scan.jsonl" | grep -qF "\"host\":\"$host\"" ||
  fail "the epilog's bundle is not of host $host: $(head -c 300 "$tmp/epilog-scan.jsonl")"
say "epilog: failed job $fjob left $(basename "$bundle") ($(stat -c %s "$bundle") bytes) in $((SECONDS - t0)) s; scan reports its CUDA error"
say "PASSED in $((SECONDS - start)) s: $tasks array tasks over $bundles bundles, merge equals the unsharded scan, $(wc -l <"$tmp/planted") planted fault(s) found; a failed job's epilog bundle scanned"
