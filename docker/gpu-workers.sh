#!/usr/bin/env bash
# One GPU worker container per GPU of this machine, each its own compose project
# (<project>-gpu<N>), all on the shared network named in docker-compose.yml.
#
#   docker/gpu-workers.sh up [GPU_ID ...]     # default: every GPU nvidia-smi lists
#   docker/gpu-workers.sh down [GPU_ID ...]
#   docker/gpu-workers.sh ps
#
# Equivalent by hand, for GPU 3:
#   GPU_ID=3 docker compose -p kernel-engineering-gpu3 --profile gpu up -d gpu-worker
set -euo pipefail
cd "$(dirname "$0")/.."

project="${COMPOSE_PROJECT_NAME:-kernel-engineering}"
action="${1:-up}"
shift || true

if [ "$#" -gt 0 ]; then
    gpus=("$@")
else
    mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader)
fi
if [ "${#gpus[@]}" -eq 0 ]; then
    echo "no GPU found (nvidia-smi listed none); pass GPU ids explicitly" >&2
    exit 1
fi

if [ "$action" = up ]; then
    docker compose -p "$project" --profile gpu build gpu-worker   # one image for all of them
fi
for gpu in "${gpus[@]}"; do
    case "$action" in
        up)
            GPU_ID="$gpu" docker compose -p "$project-gpu$gpu" --profile gpu up -d gpu-worker ;;
        down)
            # stop + rm rather than `down`: the network is shared with the main stack.
            GPU_ID="$gpu" docker compose -p "$project-gpu$gpu" --profile gpu rm --stop --force gpu-worker ;;
        ps)
            GPU_ID="$gpu" docker compose -p "$project-gpu$gpu" --profile gpu ps gpu-worker ;;
        *)
            echo "usage: $0 up|down|ps [GPU_ID ...]" >&2
            exit 2 ;;
    esac
done
