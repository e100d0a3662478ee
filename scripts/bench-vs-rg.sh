#!/usr/bin/env bash
# faultline side by side with ripgrep (and zstd) on the inputs of issue 17, in one session:
# each row is the best wall time of RUNS runs of each command, the commands of a row taking
# turns (one run of each per round); the ratio is faultline / reference; peak RSS is
# faultline's (from /usr/bin/time -v: it counts the pages of a mapped input too) and its peak
# anonymous memory (RssAnon sampled from /proc every 10 ms).
# The reference search is `rg -c` with the prefilter's own literals (`faultline explain prefilter`).
#
# Usage: scripts/bench-vs-rg.sh [ROWS...]   (rows: syslog zst storm distinct fleet bugreport startup
#        prefilter (its own throughput, candidate lines per MB and busiest literals);
#        all by default). Env: PROFILE (fast; release or dist for the figures users get), RUNS (5),
#        DIR (/tmp: where the generated inputs are kept and reused).
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-fast}
RUNS=${RUNS:-5}
DIR=${DIR:-/tmp}
ROWS=${*:-syslog zst storm distinct fleet bugreport startup prefilter}
for t in rg zstd taskset /usr/bin/time bc; do
  command -v "$t" > /dev/null || { echo "$t not found (apt-get install ripgrep zstd util-linux time bc)"; exit 1; }
done
cargo build --profile "$PROFILE" --quiet --bin faultline --example genlog --example genstorm --example genfleet --example prefilter_stats
FL=${FL:-./target/$PROFILE/faultline} # FL=path benches another build
EX=./target/$PROFILE/examples
ANCHORS=$(mktemp)
OUT=$(mktemp)
trap 'rm -f "$ANCHORS" "$OUT" "$OUT.time"' EXIT
"$FL" explain prefilter > "$ANCHORS"
echo "faultline $("$FL" --version | awk '{ print $2 }') ($PROFILE profile), $(nproc) cores, best of $RUNS, load $(cut -d' ' -f1-3 /proc/loadavg)"

paired() { # best wall seconds of each command (commands separated by --, stdout discarded):
  # RUNS rounds, each command once per round in turn, so that all of them meet the same moments
  # of a shared machine; the clock is bash's own (no process started around a run)
  local cmds=() cur="" a i t0 t
  for a in "$@"; do
    if [ "$a" = "--" ]; then
      cmds+=("$cur")
      cur=""
    else
      cur+=" $(printf '%q' "$a")"
    fi
  done
  cmds+=("$cur")
  local b=()
  for i in "${!cmds[@]}"; do b[i]=999999; done
  for _ in $(seq "$RUNS"); do
    for i in "${!cmds[@]}"; do
      t0=$EPOCHREALTIME
      eval "${cmds[i]}" > /dev/null 2>&1 || true
      t=$EPOCHREALTIME
      b[i]=$(echo "t = ${t/,/.} - ${t0/,/.}; if (t < ${b[i]}) t else ${b[i]}" | bc -l)
    done
  done
  echo "${b[@]}"
}

anon_peak() { # peak RssAnon (MiB) of "$@", sampled every 10 ms
  "$@" > /dev/null 2>&1 &
  local pid=$! peak=0 kb
  while kill -0 "$pid" 2> /dev/null; do
    kb=$(awk '/^RssAnon/ { print $2 }' "/proc/$pid/status" 2> /dev/null || echo 0)
    [ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb
    sleep 0.01
  done
  wait "$pid" || true
  echo $((peak / 1024))
}

rss() { # peak RSS (MiB) of "$@"
  /usr/bin/time -v "$@" > /dev/null 2> "$OUT.time" || true
  awk '/Maximum resident set size/ { printf "%d", $NF / 1024 }' "$OUT.time"
}

printf '%-40s %9s %9s %7s %9s %9s\n' "row" "faultline" "reference" "ratio" "RSS MiB" "anon MiB"
row() { # name, faultline seconds, reference seconds (or -), then the faultline command for memory
  local name=$1 f=$2 r=$3
  shift 3
  local ratio="-"
  [ "$r" != "-" ] && ratio=$(printf '%.2f' "$(echo "$f / $r" | bc -l)")
  [ "$r" != "-" ] && r=$(printf '%.3f' "$r")
  printf '%-40s %9.3f %9s %7s %9s %9s\n' "$name" "$f" "$r" "$ratio" "$(rss "$@")" "$(anon_peak "$@")"
}

for R in $ROWS; do
  case $R in
  syslog)
    F=$DIR/faultline-bench-256.log
    [ -f "$F" ] || "$EX/genlog" "$F" 256 > /dev/null 2>&1
    cat "$F" > /dev/null
    read -r FL2 RG2 FL1 RG1 < <(paired "$FL" analyze --format json "$F" -- rg -c -F -f "$ANCHORS" "$F" \
      -- taskset -c 0 "$FL" analyze --format json --jobs 1 "$F" -- taskset -c 0 rg -c -j1 -F -f "$ANCHORS" "$F")
    row "syslog 256 MiB, all cores vs rg -c" "$FL2" "$RG2" "$FL" analyze --format json "$F"
    row "syslog 256 MiB, one core vs rg -c -j1" "$FL1" "$RG1" taskset -c 0 "$FL" analyze --format json --jobs 1 "$F"
    printf '%-40s %9s %9s %7.2f\n' "syslog 256 MiB, 1 -> $(nproc) cores speed-up" "" "" "$(echo "$FL1 / $FL2" | bc -l)"
    ;;
  zst)
    F=$DIR/faultline-bench-256.log
    [ -f "$F" ] || "$EX/genlog" "$F" 256 > /dev/null 2>&1
    [ -f "$F.zst" ] || zstd -q -3 -T0 -k "$F"
    read -r FZ ZW < <(paired "$FL" analyze --format json "$F.zst" -- sh -c "zstd -dc '$F.zst' | wc -l")
    row "syslog .zst vs zstd -dc | wc -l" "$FZ" "$ZW" "$FL" analyze --format json "$F.zst"
    ;;
  storm)
    F=$DIR/faultline-storm-200.log
    [ -f "$F" ] || "$EX/genstorm" storm "$F" 200 > /dev/null 2>&1
    cat "$F" > /dev/null
    read -r A B < <(paired "$FL" analyze --format json "$F" -- rg -c -F -f "$ANCHORS" "$F")
    row "Xid storm 200 MiB (2 M lines) vs rg -c" "$A" "$B" "$FL" analyze --format json "$F"
    ;;
  distinct)
    F=$DIR/faultline-distinct-250k.log
    [ -f "$F" ] || "$EX/genstorm" distinct "$F" 250000 > /dev/null 2>&1
    read -r A B < <(RUNS=1 paired "$FL" analyze --format json "$F" -- rg -c -F -f "$ANCHORS" "$F")
    row "distinct keys 250 k lines (target < 5 s)" "$A" "$B" "$FL" analyze --format json "$F"
    ;;
  fleet)
    D=$DIR/faultline-fleet-2000x50k
    [ -d "$D" ] || "$EX/genfleet" "$D" 2000 50 > /dev/null 2>&1
    find "$D" -type f -exec cat {} + > /dev/null
    read -r A B < <(paired "$FL" scan --quiet --format jsonl -o "$OUT" "$D" -- rg -c -z -F -f "$ANCHORS" "$D")
    row "fleet scan 2000 x 50 KiB vs rg -c -z" "$A" "$B" "$FL" scan --quiet --format jsonl -o "$OUT" "$D"
    ;;
  bugreport)
    F=$DIR/faultline-bugreport-50m.log
    if [ ! -f "$F" ]; then
      T=$(mktemp -d)
      # node 5 has a bug report: its last boot's share of 114 MiB of noise is about 52 MiB
      "$EX/genfleet" "$T" 6 117000 > /dev/null 2>&1 || true
      # the fleet holds a corrupt bug report on purpose: take the largest one that decodes
      for g in $(find "$T" -name 'nvidia-bug-report-*.log.gz' -exec ls -S {} +); do
        gzip -t "$g" 2> /dev/null && { zcat "$g" > "$F.tmp" && mv "$F.tmp" "$F"; break; }
      done
      rm -rf "$T"
    fi
    cat "$F" > /dev/null
    read -r A B < <(paired "$FL" analyze --format json "$F" -- rg -c -F -f "$ANCHORS" "$F")
    row "bug report $(($(stat -c %s "$F") / 1048576)) MiB vs rg -c" "$A" "$B" "$FL" analyze --format json "$F"
    ;;
  startup)
    F=$DIR/faultline-one-line.log
    echo "Jan 12 03:04:05 gpu-node-01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." > "$F"
    read -r A B < <(paired "$FL" analyze --format json "$F" -- rg -c -F -f "$ANCHORS" "$F")
    row "1-line input (target < 10 ms)" "$A" "$B" "$FL" analyze --format json "$F"
    ;;
  prefilter)
    F=$DIR/faultline-bench-256.log
    [ -f "$F" ] || "$EX/genlog" "$F" 256 > /dev/null 2>&1
    echo
    "$EX/prefilter_stats" "$F" $(ls ../shared/noise/*.log 2> /dev/null)
    ;;
  *) echo "unknown row $R" ;;
  esac
done
