#!/usr/bin/env bash
# Times `faultline scan` on a generated fleet archive (examples/genfleet.rs) and prints
# bundles/s, MB/s (on disk and decompressed) and peak memory (with /usr/bin/time -v if present).
# Usage: scripts/bench-fleet.sh [NODES] [KIB_PER_NODE] [DIR]
# The archive is generated once per NODES/KIB_PER_NODE and reused (the generator is
# deterministic); the page cache is warmed first, so the figures are CPU-bound ones.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${1:-400}
KIB=${2:-512}
DIR=${3:-/tmp/faultline-fleet-${NODES}x${KIB}k}
cargo build --release --quiet --example genfleet --bin faultline
FL=./target/release/faultline
[ -d "$DIR" ] || ./target/release/examples/genfleet "$DIR" "$NODES" "$KIB" | tail -1
find "$DIR" -type f -exec cat {} + > /dev/null # warm the page cache
OUT=$(mktemp)
trap 'rm -f "$OUT" "$OUT.time"' EXIT

now() { date +%s.%N; }
best() { # best wall-clock seconds of 3 runs of `faultline scan "$@"`
  local b=999999
  for _ in 1 2 3; do
    local s e
    s=$(now)
    "$FL" scan --quiet --format jsonl -o "$OUT" "$@" "$DIR"
    e=$(now)
    b=$(awk -v s="$s" -v e="$e" -v b="$b" 'BEGIN { t = e - s; print (t < b ? t : b) }')
  done
  echo "$b"
}
field() { tail -n 1 "$OUT" | grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2; }

T1=$(best --jobs 1)
TN=$(best)
BUNDLES=$(field bundles)
DISK=$(field disk_bytes)
READ=$(field bytes)
printf 'fleet: %s bundles, %.1f MB on disk, %.1f MB decompressed (%s), %s cores\n' \
  "$BUNDLES" "$(awk -v x="$DISK" 'BEGIN { print x / 1e6 }')" \
  "$(awk -v x="$READ" 'BEGIN { print x / 1e6 }')" "$DIR" "$(nproc)"
printf '%-26s %9s %11s %11s %11s\n' "run (best of 3)" "seconds" "bundles/s" "MB/s disk" "MB/s read"
row() {
  awk -v n="$2" -v t="$3" -v d="$DISK" -v r="$READ" -v name="$1" \
    'BEGIN { printf "%-26s %9.3f %11.1f %11.1f %11.1f\n", name, t, n / t, d / t / 1e6, r / t / 1e6 }'
}
row "scan --jobs 1" "$BUNDLES" "$T1"
row "scan (all cores)" "$BUNDLES" "$TN"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -v "$FL" scan --quiet --format jsonl -o "$OUT" "$DIR" 2> "$OUT.time"
  RSS=$(grep 'Maximum resident set size' "$OUT.time" | awk '{ print $NF }')
  echo "peak RSS (all cores): $((RSS / 1024)) MiB"
else
  echo "peak RSS: /usr/bin/time not found (apt-get install time)"
fi
