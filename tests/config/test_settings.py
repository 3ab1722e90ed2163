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
