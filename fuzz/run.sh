#!/usr/bin/env bash
# Fuzzes each target for SECONDS on one core, then minimizes what it found together with the
# committed corpus into fuzz/corpus/<target>/ (the smallest set of files that keeps every covered
# edge), and prints libFuzzer's summary line. Usage: fuzz/run.sh [SECONDS] [TARGET...]
# (default 60 s, all targets). Needs cargo-fuzz; uses the stable toolchain through
# RUSTC_BOOTSTRAP=1 (see README.md). The full corpora stay in $FUZZ_WORK for the next run.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(container kernel syslog journal joblog bug_report nvidia_smi nvidia_smi_xml dcgmi server knowledge analyze)
fi
export RUSTC_BOOTSTRAP=1
work=${FUZZ_WORK:-/tmp/faultline-fuzz}
[ -d seeds ] || ./seed.sh fuzz/seeds
cargo fuzz build -O -a  # -a: debug assertions and overflow checks on
bin=target/x86_64-unknown-linux-gnu/release
flags=(-timeout=10 -rss_limit_mb=2048 -max_len=8192)
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/new" "corpus/$t" "artifacts/$t"
  # -jobs=1: one fuzzing process beside the driver (the machine is shared); it logs to fuzz-0.log
  (cd "$work/$t" && rm -f fuzz-*.log &&
    "$OLDPWD/$bin/$t" "$work/$t/new" "$OLDPWD/corpus/$t" "$OLDPWD/seeds/$t" \
      -jobs=1 -workers=1 -max_total_time="$secs" "${flags[@]}" \
      -artifact_prefix="$OLDPWD/artifacts/$t/" -print_final_stats=1 >/dev/null 2>&1 || true)
  cat "$work/$t/fuzz-0.log" >>"$work/$t/fuzz.log"
  grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$t/fuzz-0.log" | sed "s/^/$t: /" || true
  # minimize: everything found plus the committed corpus, edges only, set cover
  rm -rf "$work/$t/min" && mkdir -p "$work/$t/min"
  "$bin/$t" -set_cover_merge=1 -use_counters=0 "$work/$t/min" "corpus/$t" "$work/$t/new" "seeds/$t" \
    "${flags[@]}" >"$work/$t/merge.log" 2>&1
  rm -rf "corpus/$t" && mv "$work/$t/min" "corpus/$t"
  echo "$t: corpus $(ls "corpus/$t" | wc -l) files, $(du -sk "corpus/$t" | cut -f1) KiB; crashes: $(ls "artifacts/$t" | wc -l)"
done
