#!/usr/bin/env bash
# Fuzzes each target for SECONDS on one core, then minimizes what it found together with the
# committed corpus into fuzz/corpus/<target>/ (what `cargo fuzz cmin` does), and prints the
# libFuzzer summary lines. Usage: fuzz/run.sh [SECONDS] [TARGET...]  (default 60 s, all targets)
# Needs cargo-fuzz; works with the stable toolchain through RUSTC_BOOTSTRAP=1 (see README.md).
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(container kernel syslog journal joblog bug_report nvidia_smi nvidia_smi_xml dcgmi knowledge analyze)
fi
export RUSTC_BOOTSTRAP=1
work=${FUZZ_WORK:-/tmp/faultline-fuzz}
[ -d seeds ] || ./seed.sh fuzz/seeds
cargo fuzz build -O
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/new" "corpus/$t" "artifacts/$t"
  log="$work/$t/fuzz.log"
  # -jobs=1: one fuzzing process beside the driver (the machine is shared); its log is fuzz-0.log
  (cd "$work/$t" && rm -f fuzz-*.log &&
    "$OLDPWD/target/x86_64-unknown-linux-gnu/release/$t" "$work/$t/new" "$OLDPWD/corpus/$t" "$OLDPWD/seeds/$t" \
      -jobs=1 -workers=1 -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
      -artifact_prefix="$OLDPWD/artifacts/$t/" -print_final_stats=1 >/dev/null 2>&1 || true)
  cp "$work/$t/fuzz-0.log" "$log"
  grep -E '^#[0-9]+ +DONE|^Done [0-9]+ runs|stat::number_of_executed_units|stat::new_units_added' "$log" | sed "s/^/$t: /" || true
  # minimize: everything found plus the old corpus, merged into a fresh folder
  rm -rf "$work/$t/min" && mkdir -p "$work/$t/min"
  "./target/x86_64-unknown-linux-gnu/release/$t" -merge=1 "$work/$t/min" "corpus/$t" "$work/$t/new" "seeds/$t" \
    -timeout=10 -rss_limit_mb=2048 -max_len=8192 >"$work/$t/merge.log" 2>&1
  rm -rf "corpus/$t" && mv "$work/$t/min" "corpus/$t"
  echo "$t: corpus $(ls "corpus/$t" | wc -l) files, $(du -sk "corpus/$t" | cut -f1) KiB; crashes: $(ls "artifacts/$t" | wc -l)"
done
