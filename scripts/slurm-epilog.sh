#!/bin/bash
# faultline capture for every failed Slurm job: set `Epilog=/etc/slurm/faultline-epilog.sh` (a
# copy of this file) in slurm.conf. slurmd runs it as root on every node of the job when the job
# ends; for a job that failed it runs `faultline collect` (about a second, 25 s at most) with
# the job's output files, into a shared folder, one bundle per job and node:
#   $FAULTLINE_EPILOG_DIR/job-<JOBID>-<NODE>.tar.zst
# and `faultline scan $FAULTLINE_EPILOG_DIR` is the fleet view of the failures.
#
# A job failed when the exit code Slurm gives the epilog is not zero (SLURM_JOB_EXIT_CODE, a
# wait(2) status, or SLURM_JOB_EXIT_CODE2 `code:signal`), else when `scontrol show job` says
# ExitCode other than 0:0 or a failed JobState (FAILED, NODE_FAIL, TIMEOUT, OUT_OF_MEMORY,
# CANCELLED, BOOT_FAIL, DEADLINE, PREEMPTED). FAULTLINE_EPILOG_ALWAYS=1 captures every job.
#
# Settings (environment, or edit the defaults below): FAULTLINE_BIN (/usr/bin/faultline),
# FAULTLINE_EPILOG_DIR (/shared/faultline/bundles), FAULTLINE_EPILOG_ARGS (extra collect
# options, e.g. "--redact-key-file /etc/faultline/key"), FAULTLINE_EPILOG_LOG (a log of what
# this script did, default: syslog through `logger` when present).
#
# It always exits 0: a failing epilog would drain the node. Job logs are read only when they
# belong to the job's user and have no symbolic link in their path (`collect --job-log-uid`).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
FAULTLINE=${FAULTLINE_BIN:-/usr/bin/faultline}
DIR=${FAULTLINE_EPILOG_DIR:-/shared/faultline/bundles}
job=${SLURM_JOB_ID:-}
node=${SLURMD_NODENAME:-$(hostname -s)}

note() {
  if [ -n "${FAULTLINE_EPILOG_LOG:-}" ]; then
    echo "$(date -u +%FT%TZ) faultline-epilog job ${job:-?} on $node: $*" >>"$FAULTLINE_EPILOG_LOG"
  elif command -v logger >/dev/null 2>&1; then
    logger -t faultline-epilog "job ${job:-?} on $node: $*"
  fi
}

# whether the job failed, from what Slurm gives the epilog, else from slurmctld
failed() {
  [ "${FAULTLINE_EPILOG_ALWAYS:-0}" = 1 ] && return 0
  if [ -n "${SLURM_JOB_EXIT_CODE2:-}" ]; then
    [ "$SLURM_JOB_EXIT_CODE2" != "0:0" ] && return 0 || return 1
  fi
  if [ -n "${SLURM_JOB_EXIT_CODE:-}" ]; then
    [ "$SLURM_JOB_EXIT_CODE" != 0 ] && return 0 || return 1
  fi
  [ -n "$info" ] || return 1
  case "$info" in *" ExitCode=0:0 "*) ;; *" ExitCode="*) return 0 ;; esac
  case "$info" in
    *" JobState=FAILED "* | *" JobState=NODE_FAIL "* | *" JobState=TIMEOUT "* | \
      *" JobState=OUT_OF_MEMORY "* | *" JobState=CANCELLED "* | *" JobState=BOOT_FAIL "* | \
      *" JobState=DEADLINE "* | *" JobState=PREEMPTED "*) return 0 ;;
  esac
  return 1
}

main() {
  [ -n "$job" ] || { note "no SLURM_JOB_ID: not run by slurmd"; return; }
  info=" $(timeout 10 scontrol -o show job "$job" 2>/dev/null | head -1) "
  failed || return
  [ -x "$FAULTLINE" ] || { note "no $FAULTLINE: nothing captured"; return; }
  mkdir -p "$DIR" 2>/dev/null
  logs=()
  for key in StdOut StdErr; do
    f=$(sed -n "s/.* $key=\([^ ]*\) .*/\1/p" <<<"$info")
    [ -n "$f" ] && [ -f "$f" ] && [[ ! " ${logs[*]} " =~ " --job-log $f " ]] && logs+=(--job-log "$f")
  done
  for f in "${SLURM_JOB_STDOUT:-}" "${SLURM_JOB_STDERR:-}"; do
    [ -n "$f" ] && [ -f "$f" ] && [[ ! " ${logs[*]} " =~ " $f " ]] && logs+=(--job-log "$f")
  done
  out="$DIR/job-$job-$node.tar.zst"
  uid=${SLURM_JOB_UID:-}
  # shellcheck disable=SC2086 # FAULTLINE_EPILOG_ARGS is a list of options
  if timeout -k 5 60 "$FAULTLINE" collect --quiet -o "$out" ${uid:+--job-log-uid "$uid"} \
    "${logs[@]}" ${FAULTLINE_EPILOG_ARGS:-} 2>>"${FAULTLINE_EPILOG_LOG:-/dev/null}"; then
    note "failed job: captured $out"
  else
    note "failed job: faultline collect did not finish (exit $?)"
  fi
}

main
exit 0
