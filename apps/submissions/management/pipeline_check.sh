#!/usr/bin/env bash
# The judge pipeline end to end on one GPU machine, on the embedded defaults (SQLite, file-system broker):
# a GPU worker and a compile worker started exactly as README.md documents them, kernels submitted through
# Django (the exercise of "Kernel 8: Warptiling": its starter, the 08 rung, a kernel that hangs, the 08 rung
# again), then the reference ladder measured by the GPU worker and exported as the demo fixture.
#
#   bash apps/submissions/management/pipeline_check.sh [LOG_DIR]      # PY, CELERY, HANG_S, LADDER_WAIT_S
set -u
LOGS=${1:-/tmp/pipeline-check}
PY=${PY:-python3}
CELERY=${CELERY:-celery}
export DJANGO_SETTINGS_MODULE=config.settings.dev VAR_DIR=${VAR_DIR:-/tmp/pipeline-check-var} PYTHONUNBUFFERED=1
rm -rf "$VAR_DIR" && mkdir -p "$VAR_DIR" "$LOGS"
$PY manage.py migrate -v0 && $PY manage.py load_demo | tail -1 || exit 1

CUDA_VISIBLE_DEVICES=0 GPU_KIND=h200 setsid $CELERY -A config worker -Q gpu.h200 -c 1 -n gpu0@%h --prefetch-multiplier 1 -l INFO > "$LOGS/gpu-worker.log" 2>&1 &
GPU_PID=$!
setsid $CELERY -A config worker -Q default,compile -c 2 -n cpu@%h -l INFO > "$LOGS/cpu-worker.log" 2>&1 &
CPU_PID=$!
trap 'kill -TERM -$GPU_PID -$CPU_PID 2>/dev/null; sleep 3' EXIT

$PY manage.py submit_kernels --email subscriber@example.com --capsule kernel-8-warptiling --time-limit "${HANG_S:-20}" \
    @starter kernels/reference/08_warptiling.cu @hang kernels/reference/08_warptiling.cu --timeout 600
$PY manage.py reference_ladder --enqueue --wait "${LADDER_WAIT_S:-480}" --export "$LOGS/reference_ladder_h200.json"
$PY manage.py shell -c "
from apps.submissions.models import GpuWorker
for w in GpuWorker.objects.all(): print('GpuWorker', w.hostname, w.gpu_kind, w.gpu_name, 'jobs_done', w.jobs_done, 'last_seen', w.last_seen_at)"
