"""What a judge worker's environment may hold (issue 41: least secret per process).

The judge workers (Celery queues `compile` and `gpu.<kind>`) handle readers' kernel sources, so whatever their
environment holds, a hostile source may read (`#include "/proc/self/environ"` was the way in). They hold only what
they use: the database (they write results), the broker, the judge's own settings, logging and error reporting.
The site's secrets stay with the web server and the `default` worker, which sign, mail and call Stripe.

Used in three places: config/settings/judge_worker.py refuses to start while a site secret is set; the GPU node
supervisor (apps/submissions/gpu_node.py) hands its workers only the variables allowed here; tests/test_compose.py
holds docker-compose.yml's judge services to the same lists.
"""

from collections.abc import Mapping

# The site's secrets: what a judge worker must never hold. SECRET_KEY signs sessions, password-reset and email
# links (forged with it, any account is taken over); the others are credentials to Stripe, the mail server, GitHub's
# log-in and the shared cache (which holds the public pages every visitor is served: writable, they could be
# replaced). SENTRY_DSN is not among them: a DSN only lets its holder send events to the project (Sentry puts it in
# browsers' pages for that reason), and the judge's errors are the ones operators most need to see.
SITE_SECRETS = (
    "SECRET_KEY",
    "SECRET_KEY_FALLBACKS",
    "STRIPE_SECRET_KEY",
    "STRIPE_WEBHOOK_SECRET",
    "EMAIL_HOST_PASSWORD",
    "GITHUB_CLIENT_SECRET",
    "REDIS_URL",
)

# What a judge worker reads, by name: the process's own (interpreter, locale, temporary folder), the settings, the
# database, logging and error reporting.
JUDGE_WORKER_VARIABLES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "HOSTNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "LD_LIBRARY_PATH",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "DJANGO_SETTINGS_MODULE",
        "DEBUG",
        "VAR_DIR",
        "DATABASE_URL",
        "DB_CONN_MAX_AGE",
        "SQLITE_BUSY_TIMEOUT_MS",
        "LOG_FORMAT",
        "LOG_LEVEL",
        "SENTRY_DSN",
        "SENTRY_ENVIRONMENT",
        "SENTRY_RELEASE",
        "SENTRY_SEND_DEFAULT_PII",
    }
)
# ... and by family: the broker and Celery's limits, the GPU pool, the pipeline's deadlines, the profiles (issue 43:
# a GPU worker queues them, runs ncu and writes the report under PROFILE_ROOT), the judge library and CUDA. No secret
# of the site is named so (SITE_SECRETS are refused even here).
JUDGE_WORKER_PREFIXES = (
    "CELERY_",
    "GPU_",
    "SUBMISSION_",
    "SUBMISSIONS_",
    "PROFILE_",
    "PROFILES_",
    "KERNELS_",
    "CUDA_",
    "CUPY_",
    "NVIDIA_",
    "LC_",
)

# Names of further variables to hand on, comma-separated: the settings of a judge that tests or benchmarks stand in
# (tests/submissions/standin_judge.py reads STANDIN_*). Site secrets are never handed on, listed here or not.
EXTRA_VARIABLES = "JUDGE_WORKER_EXTRA_ENV"


def site_secrets_in(environ: Mapping[str, str]) -> list[str]:
    """The site secrets that `environ` holds (set and not empty: an empty variable holds nothing)."""
    return [name for name in SITE_SECRETS if environ.get(name, "").strip()]


def _allowed(name: str, extra: set[str]) -> bool:
    if name in SITE_SECRETS:
        return False
    return name in JUDGE_WORKER_VARIABLES or name in extra or name.startswith(JUDGE_WORKER_PREFIXES)


def judge_worker_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The part of `environ` a judge worker is started with."""
    extra = {name.strip() for name in environ.get(EXTRA_VARIABLES, "").split(",") if name.strip()}
    return {name: value for name, value in environ.items() if _allowed(name, extra)}
