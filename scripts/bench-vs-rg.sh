#!/usr/bin/env bash
# Times `faultline analyze` against `rg -c` with the same anchor literals on the same file.
# Usage: scripts/bench-vs-rg.sh [MiB] [FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
MIB=${1:-256}
FILE=${2:-/tmp/faultline-bench-${MIB}.log}
cargo build --release --quiet --examples --bins
[ -f "$FILE" ] || ./target/release/examples/genlog "$FILE" "$MIB"
ANCHORS=$(mktemp)
# the literals faultline's prefilter searches for (every recognizer anchor contains one of them)
./target/release/faultline explain prefilter > "$ANCHORS"
command -v rg >/dev/null || { echo "rg not found (apt-get install ripgrep)"; exit 1; }
SIZE=$(stat -c %s "$FILE")
cat "$FILE" > /dev/null  # warm the page cache
best() { # best of 5 wall-clock runs, seconds
  local b=999
  for _ in 1 2 3 4 5; do
    local s e t
    s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc -l); b=$(echo "if ($t < $b) $t else $b" | bc -l)
  done
  echo "$b"
}
RG1=$(best rg -c -F -f "$ANCHORS" -j1 "$FILE")
FL1=$(best ./target/release/faultline analyze --format json --jobs 1 "$FILE")
RG2=$(best rg -c -F -f "$ANCHORS" "$FILE")
FL2=$(best ./target/release/faultline analyze --format json "$FILE")
mbps() { echo "scale=0; $SIZE / $1 / 1000000" | bc -l; }
printf '%-34s %9s %10s\n' "command ($((SIZE / 1048576)) MiB)" "seconds" "MB/s"
printf '%-34s %9.3f %10s\n' "rg -c (1 thread)" "$RG1" "$(mbps "$RG1")"
printf '%-34s %9.3f %10s\n' "faultline analyze (1 thread)" "$FL1" "$(mbps "$FL1")"
printf '%-34s %9.3f %10s\n' "rg -c (all threads)" "$RG2" "$(mbps "$RG2")"
printf '%-34s %9.3f %10s\n' "faultline analyze (all threads)" "$FL2" "$(mbps "$FL2")"
echo "ratio faultline/rg, 1 thread:    $(echo "scale=2; $FL1 / $RG1" | bc -l)"
echo "ratio faultline/rg, all threads: $(echo "scale=2; $FL2 / $RG2" | bc -l)"
rm -f "$ANCHORS"
