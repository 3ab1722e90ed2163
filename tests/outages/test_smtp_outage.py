"""The SMTP server down and back (issue 28), with a real Celery worker: sign-up and password reset answer as usual
(they answered 500, and sign-up left an unverified account behind), the account emails wait in the queue, and once
the mail server is back the worker's retries deliver each of them, once."""

from __future__ import annotations

import time

import pytest
from allauth.account.models import EmailAddress
from django.test import Client
from django.urls import reverse

from apps.accounts.models import User
from tests.outages import broker_at
from tests.outages.servers import SmtpServer, own_redis  # noqa: F401  (the fixture)
from tests.submissions.workers import CeleryWorkers, workers_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PASSPHRASE = "a-long-pass-phrase-42"


@pytest.fixture
def smtp():
    server = SmtpServer()  # not started: the mail server is down
    yield server
    server.stop()


@pytest.fixture
def mail_worker_process(own_redis, smtp, django_db_setup):
    env = {
        **workers_env(own_redis.url(0), own_redis.url(1)),
        "TEST_SMTP_PORT": str(smtp.port),
        # Longer than any retry's countdown here: the worker holds a retried task until its countdown ends, and a
        # task held past the visibility timeout is handed out again, which sent a mail twice (the tests' 5 s).
        "CELERY_BROKER_VISIBILITY_TIMEOUT_S": "120",
    }
    processes = CeleryWorkers(env)
    processes.start("default", queues="default")
    yield processes
    processes.stop_all()


def wait_for_messages(smtp: SmtpServer, count: int, timeout_s: float = 60) -> list[bytes]:
    deadline = time.monotonic() + timeout_s
    while len(smtp.messages) < count and time.monotonic() < deadline:
        time.sleep(0.2)
    return smtp.messages


def test_sign_up_and_password_reset_with_smtp_down_then_the_mail_arrives(
    settings, own_redis, smtp, mail_worker_process, reader
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"  # the web, too, on the dead server
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS = "127.0.0.1", smtp.port, False
    with broker_at(own_redis.url(1)):
        client = Client(raise_request_exception=False)
        signup = client.post(
            reverse("account_signup"),
            {"email": "new.reader@example.org", "password1": PASSPHRASE, "password2": PASSPHRASE},
        )
        reset = Client(raise_request_exception=False).post(reverse("account_reset_password"), {"email": reader.email})
    assert signup.status_code == 302 and reset.status_code == 302
    assert User.objects.filter(email="new.reader@example.org").count() == 1

    time.sleep(2)  # the worker tries, fails and backs off meanwhile
    assert smtp.messages == [] and "Retry in" in mail_worker_process.log("default")
    smtp.start()

    messages = wait_for_messages(smtp, 2)
    assert len(messages) == 2, mail_worker_process.log("default")[-3000:]
    text = b"\n".join(messages).decode(errors="replace")
    assert "new.reader@example.org" in text and "/accounts/confirm-email/" in text
    assert reader.email in text and "/accounts/password/reset/key/" in text
    time.sleep(1)
    assert len(smtp.messages) == 2  # each once
    assert not EmailAddress.objects.get(email="new.reader@example.org").verified  # until the link is followed
