#!/usr/bin/env bash
# Writes the starting seeds of every fuzz target into DIR/<target>/ (default fuzz/seeds/), cut
# from the fixtures in corpus/ (heads of at most 4 KiB, so one execution stays fast), plus
# containers made from them and a few hand-written inputs for the formats corpus/ lacks.
# The committed fuzz/corpus/<target>/ is what `cargo fuzz cmin` kept of a run started from these.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-fuzz/seeds}
rm -rf "$out"
for t in container kernel syslog journal joblog bug_report nvidia_smi nvidia_smi_xml dcgmi server knowledge analyze; do
  mkdir -p "$out/$t"
done
head4k() { head -c 4096 "$1"; }
put() { # put TARGET NAME FILE...: the head of each file as one seed
  local t=$1 name=$2
  shift 2
  for f in "$@"; do head4k "$f" >"$out/$t/$name-$(basename "$(dirname "$f")")-$(basename "$f")"; done
}
put kernel k corpus/xid79-aer-dmesg/dmesg.txt corpus/nvlink-xid74-iso/dmesg-iso.txt \
  corpus/driver-mismatch-kmsg/kmsg.txt corpus/ecc-dbe-kernlog/kern.log corpus/job-desync/trn-a/kern.log
put syslog s corpus/nvswitch-sxid-syslog/messages corpus/clean-node/syslog \
  corpus/apt-upgrade-mismatch/gpu-node-07/syslog corpus/bmc-sel-psu-then-gpu-lost/gpu-node-14/kern.log
put journal j corpus/gsp-timeout-journal/journal.txt corpus/host-oom-journal-json/journal.json
put joblog t corpus/job-desync/trn-a/train.log corpus/job-cuda-oom-one-rank/gpu-b/train.log \
  corpus/job-preempted/node021/slurm-7731.out corpus/multi-host-gpu-lost/gpu-node-03/train.log
put bug_report b corpus/bug-report-truncated/nvidia-bug-report.log corpus/bug-report-a100/nvidia-bug-report.log
put nvidia_smi n corpus/driver-mismatch-kmsg/nvml.txt
# the nvidia-smi -q section of a bug report
awk '/nvidia-smi --query/{on=1} on{print; n++} n>400{exit}' corpus/bug-report-a100/nvidia-bug-report.log \
  >"$out/nvidia_smi/n-section-a100.txt"
put server v corpus/bmc-sel-psu-then-gpu-lost/gpu-node-14/sel-elist.txt \
  corpus/bmc-redfish-sel-fan-gpu-lost/*/redfish-sel-entries.json corpus/bmc-dimm-ue-no-gpu/*/sel-list.txt corpus/idrac-thermal-fan/*/lclog.txt \
  corpus/apt-upgrade-mismatch/gpu-node-07/history.log corpus/roce-link-flap-topo/*/nvidia-smi-topo.txt \
  corpus/journal-de-locale-ecc/*/journal.txt
put nvidia_smi_xml x corpus/nvidia-smi-xml-thermal/l40s-07/nvidia-smi-q.xml
cat >"$out/dcgmi/d-table.txt" <<'T'
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
| GPU Memory                | Pass - GPUs: 1, 2                              |
|                           | Fail - GPU: 0                                  |
| Warning                   | GPU 0 Thermal violations totaling 13.3 second  |
|                           | s started at 9.7 seconds into the test for GP  |
|                           | U 0 Verify.                                    |
+---------------------------+------------------------------------------------+
T
cat >"$out/dcgmi/d-diag.json" <<'T'
{"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
  {"name": "Diagnostic", "results": [{"gpu_id": "0",
    "status": "Fail", "warnings": [{"warning": "GPU 0 Thermal violations totaling 13.3 seconds", "error_id": 37}]},
    {"gpu_id": "1", "status": "Pass"}]}]}]}}
T
cat >"$out/knowledge/u-recognizer-xid.toml" <<'T'
[[recognizer]]
id = "site-fan-alarm"
kind = "fan_fault"
anchors = ["FANALARM"]
regex = 'FANALARM slot (?P<slot>\d+) gpu (?P<gpu>[0-9a-f:.]+) code (?P<code>\d+) rank (?P<rank>\d+)'
samples = ["FANALARM slot 3 gpu 0000:3b:00.0 code 7 rank 1"]

[[xid]]
code = 999
mnemonic = "SITE_TEST"
title = "Site test code"
meaning = "A code only this site uses."
layer = "platform"
severity = "warning"
immediate = ""
investigatory = ""
legacy_causes = []
sympathetic = false
sticky = false
responsibility = "operator"
other_tools = ""
actions = ["Ask the site team"]
T
head -c 6000 data/rules.toml >"$out/knowledge/u-rules-head.toml"
head -c 6000 data/recognizers.toml >"$out/knowledge/u-recognizers-head.toml"
head -c 6000 data/catalog.toml >"$out/knowledge/u-catalog-head.toml"
# containers: gzip, zstd, tar, tar.gz, tar.zst, nested, truncated
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/node-a"
head -c 3000 corpus/xid79-aer-dmesg/dmesg.txt >"$tmp/node-a/dmesg.txt"
head -c 3000 corpus/gsp-timeout-journal/journal.txt >"$tmp/node-a/journal.txt"
gzip -9c "$tmp/node-a/dmesg.txt" >"$out/container/c-dmesg.gz"
zstd -q -19 -c "$tmp/node-a/dmesg.txt" >"$out/container/c-dmesg.zst"
tar -C "$tmp" -cf "$tmp/a.tar" node-a
cp "$tmp/a.tar" "$out/container/c-a.tar"
gzip -9c "$tmp/a.tar" >"$out/container/c-a.tgz"
zstd -q -19 -c "$tmp/a.tar" >"$out/container/c-a.tar.zst"
gzip -9c "$out/container/c-a.tgz" >"$out/container/c-nested.tgz.gz"
head -c 700 "$out/container/c-a.tgz" >"$out/container/c-truncated.tgz"
printf 'plain text line\n' >"$out/container/c-plain.txt"
# the whole pipeline: one of each kind of input
for t in kernel syslog journal joblog bug_report nvidia_smi nvidia_smi_xml dcgmi server container; do
  cp "$out/$t"/* "$out/analyze/"
done
echo "seeds written to $out"
