#!/usr/bin/env bash
# One GPU worker container per GPU of this machine, each its own compose project
# (<project>-gpu<N>), all on the shared network named in docker-compose.yml.
#
#   docker/gpu-workers.sh up [GPU_ID ...]     # default: GPU_IDS="0 1 ...", else every GPU nvidia-smi -L lists
#   docker/gpu-workers.sh down [GPU_ID ...]
#   docker/gpu-workers.sh ps
#   DRY_RUN=1 docker/gpu-workers.sh up        # print the docker commands instead of running them
#
# Container gpu-worker-N reserves host GPU N only (device_ids), sees it as device 0, and runs one Celery
# worker on it: -c 1, node name gpuN@<container>, queue gpu.${GPU_KIND}, GPU_ID=N (recorded with each job).
# `restart: unless-stopped` (docker-compose.yml) starts a worker again when it dies; the job it was running
# goes back to the queue (acks_late) and is judged again once. Without Docker:
# `python manage.py gpu_worker --gpus all` does the same with one process per GPU.
#
# Equivalent by hand, for GPU 3:
#   GPU_ID=3 docker compose -p kernel-engineering-gpu3 --profile gpu up -d gpu-worker
set -euo pipefail
cd "$(dirname "$0")/.."

project="${COMPOSE_PROJECT_NAME:-kernel-engineering}"
action="${1:-up}"
shift || true

run() {
    if [ -n "${DRY_RUN:-}" ]; then
        printf '%s\n' "$*"
    else
        env "$@"
    fi
}

if [ "$#" -gt 0 ]; then
    gpus=("$@")
elif [ -n "${GPU_IDS:-}" ]; then
    read -r -a gpus <<< "${GPU_IDS//,/ }"
else
    # "GPU 3: NVIDIA H200 (UUID: GPU-...)": the index, in nvidia-smi's (PCI bus) order, which device_ids uses.
    mapfile -t gpus < <(nvidia-smi -L 2>/dev/null | sed -n 's/^GPU \([0-9][0-9]*\):.*/\1/p')
fi
if [ "${#gpus[@]}" -eq 0 ]; then
    echo "no GPU found (nvidia-smi -L listed none); pass GPU ids explicitly or set GPU_IDS" >&2
    exit 1
fi

case "$action" in
    up | down | ps) ;;
    *)
        echo "usage: $0 up|down|ps [GPU_ID ...]" >&2
        exit 2 ;;
esac

if [ "$action" = up ]; then
    run docker compose -p "$project" --profile gpu build gpu-worker   # one image for all of them
fi
for gpu in "${gpus[@]}"; do
    case "$action" in
        up)
            run GPU_ID="$gpu" docker compose -p "$project-gpu$gpu" --profile gpu up -d gpu-worker ;;
        down)
            # stop + rm rather than `down`: the network is shared with the main stack.
            run GPU_ID="$gpu" docker compose -p "$project-gpu$gpu" --profile gpu rm --stop --force gpu-worker ;;
        ps)
            run GPU_ID="$gpu" docker compose -p "$project-gpu$gpu" --profile gpu ps gpu-worker ;;
    esac
done
