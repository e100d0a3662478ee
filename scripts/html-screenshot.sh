#!/usr/bin/env bash
# Renders a corpus case (or any inputs) to the HTML report and takes a PNG screenshot of it with
# headless Chromium, to check by eye that the page and its timeline picture render.
#
#   scripts/html-screenshot.sh CASE_DIR [OUT_DIR]    # writes OUT_DIR/<case>.html and <case>.png
#
# OUT_DIR defaults to target/html-screenshots. Uses Debian's chromium (installed with apt-get
# when /usr/bin/chromium is missing and we are root). The page loads nothing from the network;
# Chromium's own background traffic is switched off too. Set WINDOW=1280,3000 for a taller shot
# and FAULTLINE=path/to/faultline to use another binary (default: cargo run --release).
set -euo pipefail

case_dir=${1:?usage: scripts/html-screenshot.sh CASE_DIR [OUT_DIR]}
out_dir=${2:-target/html-screenshots}
window=${WINDOW:-1280,2000}
name=$(basename "${case_dir%/}")
chromium=${CHROMIUM:-/usr/bin/chromium}

if [[ ! -x $chromium ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    apt-get install -y chromium >/dev/null || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }
  else
    echo "html-screenshot: $chromium is missing (apt-get install chromium)" >&2
    exit 2
  fi
fi

mkdir -p "$out_dir"
html="$(cd "$out_dir" && pwd)/$name.html"
png="$(cd "$out_dir" && pwd)/$name.png"
if [[ -n ${FAULTLINE:-} ]]; then
  "$FAULTLINE" analyze --quiet --format html -o "$html" "$case_dir" || [[ $? -eq 1 ]]
else
  cargo run --quiet --release -- analyze --quiet --format html -o "$html" "$case_dir" || [[ $? -eq 1 ]]
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars \
  --screenshot="$png" --window-size="$window" "file://$html" 2>/dev/null
echo "$html"
echo "$png"
