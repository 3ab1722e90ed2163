"""Production settings: refuse to start without secrets, and pass Django's deploy checks."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROD_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.prod",
    "SECRET_KEY": "k3rn3l-" + "x7Qp9vZr2Lm4Tn8Wb5Yc1Hd6Jf0Gs3Ke" * 2,
    "ALLOWED_HOSTS": "kernel.example.com",
    "DATABASE_URL": "postgres://postgres:postgres@127.0.0.1:5432/kernel_engineering",
    "REDIS_URL": "redis://127.0.0.1:6379/1",
    # Named on the legal pages: without them check --deploy warns (pages.W001, tests/pages/test_legal.py).
    "OPERATOR_NAME": "Kernel Books Ltd",
    "OPERATOR_EMAIL": "help@kernel-books.example",
    "OPERATOR_ADDRESS": "1 Warp Street, Dublin",
}


def _manage(*args, env_overrides, drop=()):
    env = {k: v for k, v in os.environ.items() if k not in PROD_ENV and k not in drop}
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_under_production_settings():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env_overrides=PROD_ENV)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL"])
def test_production_refuses_to_start_without_a_secret(missing):
    env = {k: v for k, v in PROD_ENV.items() if k != missing}

    result = _manage("check", env_overrides=env, drop=(missing,))

    assert result.returncode != 0
    assert f"The environment variable {missing} must be set in production" in result.stderr


def test_a_malformed_boolean_fails_loudly():
    result = _manage("check", env_overrides={**PROD_ENV, "SECURE_SSL_REDIRECT": "perhaps"})

    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT='perhaps' is not a boolean" in result.stderr


def test_production_sends_email_over_smtp_from_the_environment():
    code = "from django.conf import settings as s; print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS)"
    env = {**PROD_ENV, "EMAIL_HOST": "smtp.mail.example", "EMAIL_PORT": "2525"}

    result = _manage("shell", "-c", code, env_overrides=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].split() == [
        "django.core.mail.backends.smtp.EmailBackend",
        "smtp.mail.example",
        "2525",
        "True",
    ]


def test_production_refuses_to_load_demo_accounts():
    result = _manage("load_demo", env_overrides=PROD_ENV)

    assert result.returncode != 0
    assert "DEMO_DATA_ALLOWED" in result.stderr


SENTRY_REPORT = (
    "import sentry_sdk; c = sentry_sdk.get_client(); o = c.options; "
    "print(c.is_active(), *(c.is_active() and (o['environment'], o['release'], o['send_default_pii'], "
    "o['max_request_body_size'], o['include_local_variables'], 'django' in c.integrations, "
    "'celery' in c.integrations) or ()))"
)


def test_sentry_reports_only_where_a_dsn_is_set_and_sends_no_personal_data():
    # An address that can never resolve (.invalid): nothing could be sent even if something were captured.
    sentry = {
        "SENTRY_DSN": "https://0123456789abcdef0123456789abcdef@sentry.invalid/1",
        "SENTRY_ENVIRONMENT": "staging",
        "SENTRY_RELEASE": "kernel-engineering@1.2.3",
    }
    drop = (*sentry, "SENTRY_SEND_DEFAULT_PII")

    without = _manage("shell", "-c", SENTRY_REPORT, env_overrides=PROD_ENV, drop=drop)
    with_dsn = _manage("shell", "-c", SENTRY_REPORT, env_overrides={**PROD_ENV, **sentry}, drop=drop)

    assert without.returncode == 0 and with_dsn.returncode == 0, without.stderr + with_dsn.stderr
    assert without.stdout.strip().splitlines()[-1].split() == ["False"]
    assert with_dsn.stdout.strip().splitlines()[-1].split() == [
        "True",
        "staging",
        "kernel-engineering@1.2.3",
        "False",  # send_default_pii
        "never",  # request bodies
        "False",  # local variables
        "True",  # the Django integration
        "True",  # the Celery integration
    ]


def test_secret_key_fallbacks_come_from_the_environment():
    code = "from django.conf import settings as s; print(s.SECRET_KEY_FALLBACKS)"
    env = {**PROD_ENV, "SECRET_KEY_FALLBACKS": "old-key-one, old-key-two"}

    result = _manage("shell", "-c", code, env_overrides=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "['old-key-one', 'old-key-two']"


SHOW_SETTINGS = "from django.conf import settings; print(settings.DEBUG, settings.SETTINGS_MODULE)"
WITHOUT_MODULE = {
    # manage.py, as an operator types it
    "manage": [sys.executable, "manage.py", "shell", "-c", SHOW_SETTINGS],
    # the Celery app, as `celery -A config worker` loads it (config/__init__.py imports it first)
    "celery": [sys.executable, "-c", f"import config, django; django.setup(); {SHOW_SETTINGS}"],
}


@pytest.mark.parametrize("command", sorted(WITHOUT_MODULE))
def test_without_a_settings_module_production_settings_are_taken_and_refuse_without_secrets(command):
    # Development's settings (DEBUG, a public SECRET_KEY) were the default of manage.py and the Celery app.
    bare = {k: v for k, v in os.environ.items() if k not in PROD_ENV}
    secrets = {k: v for k, v in PROD_ENV.items() if k != "DJANGO_SETTINGS_MODULE"}

    def run(env):
        return subprocess.run(WITHOUT_MODULE[command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    refused = run(bare)
    assert refused.returncode != 0 and "SECRET_KEY must be set in production" in refused.stderr

    taken = run({**bare, **secrets})
    assert taken.returncode == 0, taken.stderr
    assert taken.stdout.strip().splitlines()[-1] == "False config.settings.prod"
