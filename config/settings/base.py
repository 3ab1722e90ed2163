"""Settings shared by every environment. Everything that differs between machines comes
from environment variables (config/env.py); the per-environment modules only change
defaults and switch on what that environment needs."""

import importlib.util
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from config.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = env_str("SECRET_KEY")
# Earlier keys, comma-separated, still accepted when checking signatures (sessions' auth hashes, password reset and
# email links, signed cookies), so that rotating SECRET_KEY signs nobody out: set the new key, move the old one here,
# and remove it once sessions signed with it have expired.
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS", [])
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SITE_ID = 1
# The site's own address (scheme and host, no trailing slash), for every absolute URL built outside a request:
# EPUB links and dc:source, emails, Stripe's return addresses in test mode (config/site.py). `make run` sets it
# to its own address; production derives it from ALLOWED_HOSTS when unset (config/settings/prod.py).
SITE_URL = (env_str("SITE_URL", "") or "").rstrip("/")
# The site is served at the root of its host: the script prefix in every {% url %} is this, never a SCRIPT_NAME
# sent with the request (pages and fragments are cached for every visitor, config/caching.py).
FORCE_SCRIPT_NAME = ""

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.sites",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.github",
    "django_htmx",
    "csp",  # django-csp: the Content-Security-Policy header (CONTENT_SECURITY_POLICY below)
    "django_ace",  # the submission editor: Ace and its widget script, served as static files
    # By floor (tests/test_layers.py): an app imports only apps on the floors below it.
    "apps.accounts",
    "apps.catalog",
    "apps.subscriptions",
    "apps.reading",
    "apps.reviews",
    "apps.submissions",
    "apps.pages",
    "apps.demo",
]

MIDDLEWARE = [
    "config.body_limit.RequestBodyLimitMiddleware",  # 413 on a declared length over the cap, before anything reads
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.logging.RequestLogMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "apps.accounts.middleware.htmx_sign_in_redirect",
]

# The largest request body taken (config/body_limit.py): a submission is at most SUBMISSION_MAX_SOURCE_BYTES as a file
# and again as the editor's text, with a plan; admin forms hold capsules' Markdown. No site form uploads more.
REQUEST_MAX_BODY_BYTES = env_int("REQUEST_MAX_BODY_BYTES", 2 * 1024 * 1024)
# Django's own limits agree: a form's fields together, and uploads kept in memory (never spooled to a temporary file,
# since nothing larger than the cap gets this far).
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BODY_BYTES

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.subscriptions.context_processors.stripe_test_mode",
                "config.site.site_context",
            ],
        },
    },
]

# --- Data stores -------------------------------------------------------------------------
# DATABASE_URL wins everywhere; each environment module sets the fallback.
DEFAULT_DATABASE_URL = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"


# How long a SQLite connection waits for another's write lock before "database is locked".
SQLITE_BUSY_TIMEOUT_MS = env_int("SQLITE_BUSY_TIMEOUT_MS", 20_000)


def database_from_env(default_url: str) -> dict:
    database = dj_database_url.parse(
        env_str("DATABASE_URL", default_url), conn_max_age=env_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True
    )
    if database["ENGINE"] == "django.db.backends.sqlite3":
        # The web server and the worker share the file: WAL lets readers go on while one writes, the busy timeout
        # makes a writer wait its turn, and IMMEDIATE takes the write lock at BEGIN, where waiting works (a
        # deferred transaction that reads, then writes, fails at once when another wrote meanwhile). In WAL mode
        # synchronous=NORMAL (SQLite's advice for WAL) syncs the log at checkpoints, not at every commit: a power
        # loss may undo the last commits, never corrupt the file. The GPU worker commits at least twice a job (claim,
        # result): kernels/BENCHMARKS.md has what this saved, measured with bench/judge_load.py --cpu-standin.
        database["OPTIONS"] = {
            "init_command": (
                f"PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}"
            ),
            "transaction_mode": "IMMEDIATE",
        }
    return {"default": database}


DATABASES = database_from_env(DEFAULT_DATABASE_URL)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The demo book that `load_demo` (and so `make run`) imports.
DEMO_BOOK_DIR = BASE_DIR / "content" / "kernel-engineering"
# Reading times (each capsule's and the book's) are its words at this speed: technical text read with care.
READING_WORDS_PER_MINUTE = env_int("READING_WORDS_PER_MINUTE", 200)

REDIS_URL = env_str("REDIS_URL")


def cache_from_env(redis_url: str | None) -> dict:
    """Redis when configured; otherwise a file cache, which (unlike local memory) is shared by
    the web server and the worker, so allauth's rate limits hold across processes. "local" is each
    process's own memory, for copies of public pages and pieces of pages (config/caching.py, the templates' cache
    blocks) and nothing shared: a few per capsule, so room for a book of several hundred."""
    local = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "OPTIONS": {"MAX_ENTRIES": 2000}}
    if redis_url:
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": redis_url,
                "KEY_PREFIX": "ke",
            },
            "local": local,
        }
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        },
        "local": local,
    }


CACHES = cache_from_env(REDIS_URL)

# --- Accounts ----------------------------------------------------------------------------
AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "pages:landing"
ACCOUNT_LOGOUT_REDIRECT_URL = "pages:landing"

ACCOUNT_ADAPTER = "apps.accounts.adapter.AccountAdapter"
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
# Sign-up also asks for the public name shown on reviews and leaderboards (optional: blank is an anonymous handle).
ACCOUNT_SIGNUP_FORM_CLASS = "apps.accounts.forms.SignupNameForm"
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGIN_ON_PASSWORD_RESET = False
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[Kernel Engineering] "
# The issue asks for a clear "already registered" on sign-up; that reveals whether an address
# has an account, which the login rate limits make cheap to accept.
ACCOUNT_PREVENT_ENUMERATION = False
ACCOUNT_SESSION_REMEMBER = None
# allauth's defaults are kept (they are sensible); these are the ones a reader meets first.
# They count in the cache, which is why every environment has a shared one; when it is down they
# fail open (apps.accounts.ratelimit). login_failed's "key" is the account and the client's address
# together (apps.accounts.adapter): failures from elsewhere cannot lock the owner out.
ACCOUNT_RATE_LIMITS = {
    "login_failed": "10/m/ip,5/5m/key",
    "signup": "20/m/ip",
    "reset_password": "20/m/ip,5/m/key",
}
# Behind the TLS proxy every request comes from the proxy's address, and "per IP" would mean "everyone": list the
# proxies' addresses or networks (comma-separated, e.g. "127.0.0.1" for a proxy on this host, "172.16.0.0/12" for
# Docker's bridge). X-Forwarded-For is believed only when the peer is one of them, read from the right as far as it
# was written by them (apps/accounts/client_address.py). Empty: no proxy, the peer is the client.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
TRUSTED_PROXY_HOPS_MAX = 8  # X-Forwarded-For entries looked at, from the right

GITHUB_CLIENT_ID = env_str("GITHUB_CLIENT_ID", "")
GITHUB_CLIENT_SECRET = env_str("GITHUB_CLIENT_SECRET", "")
SOCIALACCOUNT_EMAIL_AUTHENTICATION = True
SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = True
SOCIALACCOUNT_PROVIDERS = {"github": {"SCOPE": ["user:email"], "VERIFIED_EMAIL": True}}
if GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET:
    # With no keys the provider has no app and allauth shows no GitHub button.
    SOCIALACCOUNT_PROVIDERS["github"]["APPS"] = [{"client_id": GITHUB_CLIENT_ID, "secret": GITHUB_CLIENT_SECRET}]

# --- Email -------------------------------------------------------------------------------
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Kernel Engineering <books@example.com>")
SERVER_EMAIL = env_str("SERVER_EMAIL", DEFAULT_FROM_EMAIL)

# --- Stripe (used by apps.subscriptions; the site runs without keys) ----------------------
STRIPE_SECRET_KEY = env_str("STRIPE_SECRET_KEY", "")
STRIPE_WEBHOOK_SECRET = env_str("STRIPE_WEBHOOK_SECRET", "")
STRIPE_PRICE_MONTHLY = env_str("STRIPE_PRICE_MONTHLY", "")
STRIPE_PRICE_YEARLY = env_str("STRIPE_PRICE_YEARLY", "")
STRIPE_API_BASE = env_str("STRIPE_API_BASE", "")
STRIPE_TRIAL_DAYS = env_int("STRIPE_TRIAL_DAYS", 0)  # free trial on new subscriptions; 0 = none
# An event whose processing failed this many times (its task's retries, then the sweep every 5 minutes: about an
# hour and a half at 12) is dead-lettered: kept with its error, shown in admin, replayed from there.
STRIPE_EVENT_MAX_ATTEMPTS = env_int("STRIPE_EVENT_MAX_ATTEMPTS", 12)
# Access kept after a failed renewal. Stored in each reader's access window: after a change, run `manage.py
# entitlements_refresh`.
SUBSCRIPTION_PAST_DUE_GRACE_DAYS = env_int("SUBSCRIPTION_PAST_DUE_GRACE_DAYS", 7)
# An active or trialing subscription gives access until its current period ends plus this margin, never longer:
# the renewal's event (or the daily reconciliation with Stripe) moves the end on. Enough for Stripe to retry a
# renewal and for a late webhook; stored in each window, so after a change run `manage.py entitlements_refresh`.
SUBSCRIPTION_RENEWAL_MARGIN_HOURS = env_int("SUBSCRIPTION_RENEWAL_MARGIN_HOURS", 48)

# Test mode (what `make run` starts when no STRIPE_SECRET_KEY is set): the same services and webhook handling,
# against a local Stripe stand-in (`manage.py stripe_test_server`: localstripe plus Prices, Checkout and the
# Portal) instead of Stripe. Keys and Prices are the stand-in's fixed, fake ones; pages say "test mode". Never in
# production: prod.py refuses it at start-up, and a system check (apps/subscriptions/checks.py) wherever
# STRIPE_TEST_MODE_ALLOWED is not set (dev.py and test.py set it).
STRIPE_TEST_MODE = env_bool("STRIPE_TEST_MODE", False)
STRIPE_TEST_MODE_ALLOWED = False
STRIPE_TEST_MODE_SETTINGS = {  # what the stand-in and the site agree on; nothing here is a secret
    "STRIPE_SECRET_KEY": "sk_test_standin_kernel_engineering_not_a_secret",
    "STRIPE_WEBHOOK_SECRET": "whsec_standin_kernel_engineering_not_a_secret",
    "STRIPE_PRICE_MONTHLY": "price_ke_test_monthly",
    "STRIPE_PRICE_YEARLY": "price_ke_test_yearly",
}
if STRIPE_TEST_MODE:
    if STRIPE_SECRET_KEY:
        raise ImproperlyConfigured("STRIPE_TEST_MODE uses a local stand-in: unset STRIPE_SECRET_KEY, or test mode.")
    globals().update(STRIPE_TEST_MODE_SETTINGS)
    STRIPE_API_BASE = STRIPE_API_BASE or "http://127.0.0.1:8420"  # localstripe's own default port

# How long each process may reuse its reading of the public pages' version (config/caching.py): an edit shows on
# anonymous pages within this time. 0 reads it on every request (the tests do).
PUBLIC_VERSION_TTL_MS = env_int("PUBLIC_VERSION_TTL_MS", 1000)

# --- The operator (apps.pages: terms, privacy, refunds, contact) ----------------------------
# Who runs this site and sells the subscription, as the legal pages and the contact page name them. Empty, the
# pages say that the operator has not filled them in, and `check --deploy` warns (pages.W001).
OPERATOR_NAME = env_str("OPERATOR_NAME", "")
OPERATOR_EMAIL = env_str("OPERATOR_EMAIL", "")
OPERATOR_ADDRESS = env_str("OPERATOR_ADDRESS", "")  # postal address, one line; commas separate its lines on the page
OPERATOR_JURISDICTION = env_str("OPERATOR_JURISDICTION", "")  # whose law governs the terms, e.g. "Ireland"
REFUND_WINDOW_DAYS = env_int("REFUND_WINDOW_DAYS", 14)  # a first payment is refunded on request within this time

# --- Reviews (apps.reviews) ----------------------------------------------------------------
# Fixed in code like ACCOUNT_RATE_LIMITS: product rules, not per-machine configuration.
REVIEWS_MAX_LINKS = 2  # more web addresses than this in one review reads as spam
# "<count>/<seconds>" per reader, counted in the shared cache: writes (post, edit) and reports.
REVIEWS_WRITE_RATE = "10/3600"
REVIEWS_REPORT_RATE = "10/3600"
REVIEWS_PER_PAGE = 20
REVIEWS_ON_LANDING = 5

# --- Internationalisation, static files ---------------------------------------------------
LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
# Built EPUB files: private (never under MEDIA_ROOT or STATIC_ROOT), served only by the download
# view after the access check; web and worker must share this folder.
EPUB_ROOT = Path(env_str("EPUB_ROOT", str(VAR_DIR / "epub")))
# Nsight Compute reports (.ncu-rep) of readers' kernels (issue 43): private like the EPUBs, served only to the
# submission's owner and staff by apps.submissions.views.profile_report.
PROFILE_ROOT = Path(env_str("PROFILE_ROOT", str(VAR_DIR / "profiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

SESSION_COOKIE_HTTPONLY = True
# Django's own database sessions: one indexed read per signed-in request, and nobody is signed out or refused when
# Redis is down or evicts (cached_db through Django's Redis backend turned a Redis outage into 500s on every page).
SESSION_ENGINE = "django.contrib.sessions.backends.db"
CSRF_COOKIE_HTTPONLY = True  # htmx sends the token from the page (base.html), never from the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# Content-Security-Policy on every response (django-csp 4). No template has an inline <script> or an on*= handler
# (tests/config/test_csp.py keeps it so), so scripts come only from this site, without nonces: a nonce differs per
# response and would stop anonymous pages being cached whole (config/caching.py).
# Styles allow 'unsafe-inline', the one loosening, because two things need it: the kernel editor (Ace) injects its
# stylesheets and themes as <style> elements from its own script at run time, which neither 'self' nor a nonce can
# admit without patching Ace; and the rating bars and stars carry their data as style="--share: 40%" custom
# properties. Inline style cannot run script, and script-src stays strict.
# form-action: checkout and the customer portal answer a form post with a 303 to Stripe, and browsers apply
# form-action to where the form's redirects lead as well.
STRIPE_FORM_HOSTS = ["https://checkout.stripe.com", "https://billing.stripe.com"]
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'", *STRIPE_FORM_HOSTS],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
    }
}

# --- Celery ------------------------------------------------------------------------------
# Queues (ARCHITECTURE.md, "Settings and processes"): default work, NVRTC compiles on CPU nodes, and one queue per
# GPU kind.
GPU_KINDS = env_list("GPU_KINDS", ["h200"])
# Each GPU kind has two queues: its judgements (`gpu.<kind>`) and the profiles of accepted kernels
# (`gpu.<kind>.profile`, issue 43), which its workers take only when no judgement waits (queue_order_strategy below).
CELERY_QUEUE_NAMES = [
    "default",
    "compile",
    *[name for kind in GPU_KINDS for name in (f"gpu.{kind}", f"gpu.{kind}.profile")],
]
CELERY_TASK_QUEUES = [Queue(name, routing_key=name) for name in CELERY_QUEUE_NAMES]
CELERY_TASK_DEFAULT_QUEUE = "default"
# Each task's queue, so that call sites only say `.delay(...)`. The GPU tasks (`submissions.judge`,
# `submissions.reference_ladder`, and `submissions.profile` on `gpu.<kind>.profile`) are absent on purpose: their
# queue `gpu.<kind>` is the job's GPU kind, named where they are enqueued (an explicit queue there wins over these
# routes).
CELERY_TASK_ROUTES = {
    "submissions.compile": {"queue": "compile"},
    "submissions.disassemble": {"queue": "compile"},  # cuobjdump on reader-built cubins: a judge worker's work
    "submissions.sweep": {"queue": "default"},
    "reading.*": {"queue": "default"},
    "apps.*": {"queue": "default"},
}
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_RESULT_BACKEND = None  # results live in the database, written by the tasks' services
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
# A task is acknowledged only once it finished, and given back if its worker dies mid-run,
# so a lost GPU node never loses a job; tasks are written to be idempotent for that reason.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 120)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 150)
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE = {
    "submissions-sweep": {"task": "submissions.sweep", "schedule": 60.0},  # stuck submissions: re-queue or fail
    "clear-expired-sessions": {"task": "apps.accounts.tasks.clear_expired_sessions", "schedule": 6 * 60 * 60.0},
    "stripe-events-retry": {"task": "apps.subscriptions.tasks.retry_unprocessed_stripe_events", "schedule": 5 * 60.0},
    # A reader whose stored access window ended may have a later one (a grant starting after a gap).
    "entitlements-refresh": {"task": "apps.subscriptions.tasks.refresh_ended_entitlements", "schedule": 15 * 60.0},
    # Re-reads from Stripe every subscription whose access window ends within a day or whose last event failed,
    # recomputes every stored window, and mails the operators each new dead letter.
    "subscriptions-reconcile": {"task": "apps.subscriptions.tasks.reconcile_subscriptions", "schedule": 24 * 3600.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- Submissions (apps/submissions; the judge is kernels/) ---------------------------------
SUBMISSIONS_PER_HOUR = env_int("SUBMISSIONS_PER_HOUR", 20)
SUBMISSIONS_PER_DAY = env_int("SUBMISSIONS_PER_DAY", 100)
SUBMISSION_MAX_SOURCE_BYTES = env_int("SUBMISSION_MAX_SOURCE_BYTES", 256 * 1024)  # the judge's own limit
DEFAULT_GPU_KIND = env_str("DEFAULT_GPU_KIND", GPU_KINDS[0])
# What the GPU worker's sandboxed child runs ("module:function"); tests point these at a CPU stand-in.
SUBMISSIONS_JUDGE_JOB = env_str("SUBMISSIONS_JUDGE_JOB", "kernels.runner:judge_job")
SUBMISSIONS_JUDGE_WARM_UP = env_str("SUBMISSIONS_JUDGE_WARM_UP", "kernels.gpu:warm_up")


def _bundled_cuobjdump() -> str:
    """kernels.disasm.bundled_cuobjdump(), found here without importing the judge: the cuobjdump (and its nvdisasm)
    in Triton's wheel; the CUDA wheels the judge installs carry none (nvidia-cuda-nvcc-cu12 has ptxas alone)."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return ""
    return str(
        Path(next(iter(spec.submodule_search_locations))).resolve() / "backends" / "nvidia" / "bin" / "cuobjdump"
    )


# The report's SASS (issue 46): the cuobjdump a compile worker runs, confined, on a submission's cubins.
SUBMISSIONS_CUOBJDUMP = env_str("SUBMISSIONS_CUOBJDUMP", "") or _bundled_cuobjdump()

# A GPU worker's first child measures the GPU's ceilings; later children are handed them until they are this
# old (or the device's identity changed: kernels/ceilings.py), then the next child measures again.
GPU_CEILINGS_MAX_AGE_S = env_int("GPU_CEILINGS_MAX_AGE_S", 30 * 60)
# Children a GPU worker starts ahead (kernels/sandbox.py): a burst waits for one setup per this many jobs;
# each set-up spare holds a CUDA context and sets up on a CPU core of its own (README: capacity).
GPU_WARM_SPARES = env_int("GPU_WARM_SPARES", 4)
# Deadlines after which the sweeper re-queues a submission (at most SUBMISSION_MAX_ATTEMPTS times, then fails it).
SUBMISSION_COMPILE_DEADLINE_S = env_int("SUBMISSION_COMPILE_DEADLINE_S", 5 * 60)
SUBMISSION_GPU_QUEUE_DEADLINE_S = env_int("SUBMISSION_GPU_QUEUE_DEADLINE_S", 60 * 60)  # waiting for a free GPU
SUBMISSION_GPU_RUN_MARGIN_S = env_int("SUBMISSION_GPU_RUN_MARGIN_S", 120)  # beyond the exercise's own limit
SUBMISSION_MAX_ATTEMPTS = env_int("SUBMISSION_MAX_ATTEMPTS", 3)
SUBMISSION_GPU_TASK_SOFT_LIMIT_S = env_int("SUBMISSION_GPU_TASK_SOFT_LIMIT_S", 600)  # hard limit: 60 s more
# GPU workers write a heartbeat; one silent for the window is offline and its running job is re-queued.
GPU_WORKER_HEARTBEAT_S = env_int("GPU_WORKER_HEARTBEAT_S", 15)
GPU_WORKER_ONLINE_WINDOW_S = env_int("GPU_WORKER_ONLINE_WINDOW_S", 60)
# Redis gives an unacknowledged job back after this long if its worker vanished: longer than any job runs.
CELERY_BROKER_VISIBILITY_TIMEOUT_S = env_int("CELERY_BROKER_VISIBILITY_TIMEOUT_S", 30 * 60)
# (Redis options; the file-system broker of dev.py replaces them with its own.)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_BROKER_VISIBILITY_TIMEOUT_S,
    "unacked_restore_interval": env_int("CELERY_BROKER_RESTORE_INTERVAL_S", 10),
    # kombu's Redis transport polls a worker's queues with one BRPOP, which takes from the first non-empty key in
    # the order given; its default strategy ("round_robin") moves the queue just served to the back, "priority"
    # keeps the order of `celery worker -Q`. A GPU worker started with `-Q gpu.<kind>,gpu.<kind>.profile` thus takes
    # a profile only when no judgement waits (a worker takes its next message only once its job is done: -c 1,
    # prefetch 1, acks_late). Workers of one queue are unaffected.
    "queue_order_strategy": "priority",
}

# --- Profiles of accepted submissions (issue 43: kernels/README.md, "Profiles") ---------------
# Off: no profile is queued after a judgement and readers cannot ask for one; stored profiles stay shown.
PROFILES_ENABLED = env_bool("PROFILES_ENABLED", True)
# The Nsight Compute executable on GPU nodes; "" looks for `ncu` on PATH. None found: the profile says so.
PROFILE_NCU = env_str("PROFILE_NCU", "")
# GPU-seconds of replayed launches one profile may spend; a kernel too slow for it is profiled at a test shape.
PROFILE_BUDGET_S = float(env_str("PROFILE_BUDGET_S", "10"))
# An accepted kernel identical to one profiled within this many days (the same source, language, arch, problem and GPU
# kind) gets a copy of that profile instead of another ncu run; 0 profiles every one. "Profile again" always runs ncu.
PROFILE_REUSE_DAYS = env_int("PROFILE_REUSE_DAYS", 30)
# How many times a reader may ask, over any 24 hours, for an accepted submission to be profiled again (staff: no limit).
PROFILE_REQUESTS_PER_DAY = env_int("PROFILE_REQUESTS_PER_DAY", 5)

# --- Logging -----------------------------------------------------------------------------
LOG_FORMAT = env_str("LOG_FORMAT", "json")
LOG_LEVEL = env_str("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "config.logging.JsonFormatter"},
        "text": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.server": {"level": "WARNING"},  # the request middleware logs each request once, structured
        "stripe": {
            "level": "WARNING"
        },  # the client's request/response logs: not for our logs (apps.subscriptions logs what matters)
    },
}

# --- Error reporting (optional) --------------------------------------------------------------
# Sentry, only where SENTRY_DSN is set: unhandled errors of requests and Celery tasks, and ERROR logs.
# No personal data by default: no user, IP address or cookies, and neither request bodies (forms and
# webhooks carry emails) nor stack frames' local variables (which hold readers' emails and sources).
SENTRY_DSN = env_str("SENTRY_DSN", "")
if SENTRY_DSN:
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    _sentry_pii = env_bool("SENTRY_SEND_DEFAULT_PII", False)
    sentry_sdk.init(
        dsn=SENTRY_DSN,
        environment=env_str("SENTRY_ENVIRONMENT") or None,  # None: the SDK's "production"
        release=env_str("SENTRY_RELEASE") or None,
        send_default_pii=_sentry_pii,
        max_request_body_size="medium" if _sentry_pii else "never",
        include_local_variables=_sentry_pii,
        integrations=[DjangoIntegration(), CeleryIntegration()],
    )
