#!/usr/bin/env bash
# One device call, many measurements: each step runs under its own time limit, its output kept in $OUT/<name>.log,
# and a line per step in $OUT/steps.txt, so that a step that hangs or fails costs only its own time.
#
#   bash bench/device_steps.sh BUDGET_S "name|max_s|command" ...
#
# On a node where this runs as root, each command runs as an unprivileged user (uid $BENCH_UID, 10001 as the
# Dockerfile's worker) with the environment kept: a GPU worker running as root does not profile (README, Profiles).
# The repository and the Python path must then be readable by that user: the script opens them (chmod a+rX).
set -u
budget=$1
shift
: "${OUT:?set OUT to the folder the logs go to}"
run_as=()
if [ "$(id -u)" = 0 ]; then
  uid=${BENCH_UID:-10001}
  mkdir -p /tmp/bench-home && chmod 777 /tmp/bench-home "$OUT"
  chmod -R a+rX "$PWD" ${PYTHONPATH:+${PYTHONPATH//:/ }} 2>/dev/null
  for folder in "$PWD" "$OUT"; do  # the user must reach the repository and write its results under $OUT
    while [ "$folder" != / ]; do chmod o+x "$folder"; folder=$(dirname "$folder"); done
  done
  run_as=(python3 -c "import os, sys; os.setgroups([]); os.setgid($uid); os.setuid($uid); os.environ['HOME'] = '/tmp/bench-home'; os.execvp(sys.argv[1], sys.argv[1:])")
fi
start=$(date +%s)
for spec in "$@"; do
  name=${spec%%|*}
  rest=${spec#*|}
  limit=${rest%%|*}
  command=${rest#*|}
  left=$((budget - ($(date +%s) - start)))
  if ((left < 10)); then
    echo "$name skipped (budget)" >>"$OUT/steps.txt"
    continue
  fi
  ((limit > left)) && limit=$left
  began=$(date +%s)
  timeout -k 5 "$limit" "${run_as[@]}" bash -c "$command" >"$OUT/$name.log" 2>&1
  status=$?
  echo "$name rc=$status $(($(date +%s) - began))s" >>"$OUT/steps.txt"
  echo "== $name rc=$status"
  tail -n 25 "$OUT/$name.log"
done
cat "$OUT/steps.txt"
