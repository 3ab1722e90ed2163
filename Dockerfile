# syntax=docker/dockerfile:1.7
#
# Kernel Engineering: one image for web, CPU workers and beat (target `runtime`, the default),
# and one for GPU workers (target `gpu`). Build: `docker compose build` (see docker-compose.yml).
#
#   builder      venv with the project and its `judge` extra (NVRTC compiles on CPU nodes too)
#   builder-gpu  + the CUDA user-space libraries CuPy needs to run kernels (cuBLAS for the baseline, ...)
#   gpu          the GPU worker; the driver (libcuda) comes from the NVIDIA container runtime
#   runtime      web / worker / beat / migrate, with static files collected at build time
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim-bookworm AS python-base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH


FROM python-base AS builder
RUN python -m venv "$VIRTUAL_ENV" && pip install --upgrade pip setuptools wheel
WORKDIR /src
# Dependencies first, from pyproject.toml alone, so that editing code does not reinstall them.
COPY pyproject.toml ./
RUN python - <<'PY' > /tmp/requirements.txt && pip install -r /tmp/requirements.txt
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["judge"]))
PY
# Then the project itself (`pip install .[judge]`; every requirement is already satisfied).
COPY . .
RUN pip install ".[judge]" && pip check


FROM builder AS builder-gpu
# The `gpu` extra (cupy-cuda12x[ctk]) pulls CUDA 12 user-space libraries as wheels (cuBLAS,
# cuRAND, ...) for the CuPy already installed; only the GPU image carries them (about 2 GB). It also
# brings cuda-bindings, the driver calls for cluster launches and TMA tensor maps (kernels/hopper.py), and
# PyTorch, the baseline of the problems whose library is PyTorch (kernels/problems/torch_bridge.py).
RUN pip install ".[judge,gpu]" && pip check


FROM python-base AS app-base
# A fixed, unprivileged uid so that volume ownership is stable across rebuilds.
RUN groupadd --system --gid 10001 app \
 && useradd --system --uid 10001 --gid app --home-dir /home/app --create-home --shell /usr/sbin/nologin app
WORKDIR /app
# The code runs from /app (manage.py, templates/, static/, content/ live beside the packages);
# PYTHONPATH puts it ahead of the copy `pip install .` put in site-packages.
ENV PYTHONPATH=/app \
    DJANGO_SETTINGS_MODULE=config.settings.prod \
    VAR_DIR=/app/var \
    STATIC_ROOT=/app/staticfiles \
    PORT=8000
EXPOSE 8000


FROM app-base AS gpu
COPY --from=builder-gpu /opt/venv /opt/venv
COPY . /app
# var/profiles exists in the image, owned by app, so that a new `profiles` volume mounted there is app's too.
RUN install -d -o app -g app /app/var /app/var/profiles
# Only the GPUs Docker reserved for this container are visible inside it, numbered from 0. A GPU worker runs readers'
# kernels: the judge workers' settings, which need no secret of the site and refuse to start beside one.
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    CUDA_VISIBLE_DEVICES=0 \
    DJANGO_SETTINGS_MODULE=config.settings.judge_worker
USER app
CMD ["celery", "-A", "config", "worker", "-Q", "gpu.h200,gpu.h200.profile", "-c", "1", "--prefetch-multiplier", "1", "-l", "INFO"]


FROM app-base AS runtime
COPY --from=builder /opt/venv /opt/venv
COPY . /app
# Static files are collected into the image with throwaway settings: these variables exist only
# for this RUN (never ENV), so no secret, host or URL from the build reaches the running image.
RUN SECRET_KEY=collectstatic-build-only-not-a-secret \
    ALLOWED_HOSTS=localhost \
    DATABASE_URL=sqlite:////tmp/collectstatic.sqlite3 \
    REDIS_URL=redis://localhost:6379/0 \
    python manage.py collectstatic --noinput \
 && rm -f /tmp/collectstatic.sqlite3 \
 && install -d -o app -g app /app/var /app/var/profiles
USER app
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["python", "/app/docker/healthcheck.py", "http://127.0.0.1:8000/health/"]
CMD ["gunicorn", "config.wsgi:application", "--config", "/app/docker/gunicorn.conf.py"]
