#!/bin/sh
# Peak anonymous memory (RssAnon, sampled every 20 ms) and wall time of one command; prints
# "peak_anon_kib=N elapsed_s=T" on stderr after the command's own output. File-backed pages of
# memory-mapped inputs are not counted (they are the page cache's, not faultline's).
#   scripts/peak-anon.sh target/fast/faultline analyze big.zst --format json > /dev/null
set -u
start=$(date +%s.%N)
"$@" &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
    a=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    if [ -n "${a:-}" ] && [ "$a" -gt "$peak" ]; then peak=$a; fi
    sleep 0.02
done
wait "$pid"
rc=$?
end=$(date +%s.%N)
echo "peak_anon_kib=$peak elapsed_s=$(echo "$end - $start" | bc)" >&2
exit $rc
