"""Fixtures for the Stripe tests: fake test keys (tests only), the HTTP-boundary stub, a real
localstripe server, a real Celery worker, and signed webhook deliveries."""

import contextlib
import copy
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from config.celery import app as celery_app
from tests.subscriptions.stripe_stub import event_payload, sign, start_stub

# Fake keys, for tests only: nothing real is ever configured in the repository.
SECRET_KEY = "sk_test_kernel0engineering0fake0secret0key0for0tests"
WEBHOOK_SECRET = "whsec_test_fake0webhook0signing0secret0for0tests0only"
PRICE_MONTHLY = "price_monthly_test"
PRICE_YEARLY = "price_yearly_test"


def stripe_settings(api_base: str, **extra):
    # The stub also stands in for checkout.stripe.com and billing.stripe.com (its Checkout and Portal pages): the
    # Content-Security-Policy lets a form's redirect lead there, as it lets one lead to Stripe's own hosts.
    policy = copy.deepcopy(settings.CONTENT_SECURITY_POLICY)
    policy["DIRECTIVES"]["form-action"] = [*policy["DIRECTIVES"]["form-action"], api_base]
    return override_settings(
        STRIPE_SECRET_KEY=SECRET_KEY,
        STRIPE_WEBHOOK_SECRET=WEBHOOK_SECRET,
        STRIPE_PRICE_MONTHLY=PRICE_MONTHLY,
        STRIPE_PRICE_YEARLY=PRICE_YEARLY,
        STRIPE_API_BASE=api_base,
        CONTENT_SECURITY_POLICY=policy,
        **extra,
    )


# --- The HTTP-boundary stub ----------------------------------------------------------------


@pytest.fixture(scope="session")
def _stub_server():
    stub, server = start_stub()
    yield stub
    server.shutdown()
    server.server_close()


@pytest.fixture
def stripe_stub(_stub_server):
    """The stub, empty, with the site's Stripe settings pointing at it."""
    _stub_server.reset()
    with stripe_settings(_stub_server.url):
        yield _stub_server
    _stub_server.reset()


# --- Webhook deliveries through Django's test client ------------------------------------------


@pytest.fixture
def post_event(client):
    """post_event(payload_dict, secret=..., timestamp=..., signature=...) -> response, signed as Stripe signs."""

    def post(
        payload: dict,
        *,
        secret: str = WEBHOOK_SECRET,
        timestamp: int | None = None,
        signature: str | None = None,
        body: bytes | None = None,
    ):
        body = json.dumps(payload).encode() if body is None else body
        header = signature if signature is not None else sign(body, secret, timestamp)
        return client.post(
            reverse("subscriptions:stripe-webhook"),
            data=body,
            content_type="application/json",
            headers={"Stripe-Signature": header},
        )

    return post


@pytest.fixture
def make_event():
    return event_payload


# --- localstripe, a real server ------------------------------------------------------------


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def localstripe(tmp_path_factory):
    """localstripe (PyPI) as a subprocess on a free port; yields its base URL."""
    if importlib.util.find_spec("localstripe") is None:
        pytest.skip("localstripe is not installed (pip install -e '.[dev]')")
    port = _free_port()
    workdir = tmp_path_factory.mktemp("localstripe")
    log = (workdir / "localstripe.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "localstripe", "--port", str(port), "--from-scratch"],
        cwd=workdir,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            log.close()
            pytest.fail(
                f"localstripe exited with {process.returncode}: {(workdir / 'localstripe.log').read_text()[-2000:]}"
            )
        try:
            if requests.get(f"{url}/v1/customers", auth=(SECRET_KEY, ""), timeout=1).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("localstripe did not answer within 20 s")
        time.sleep(0.1)
    yield url
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()
    shutil.rmtree(workdir, ignore_errors=True)


class LocalStripe:
    """Calls to localstripe as Stripe's own dashboard or a reader's browser would make them."""

    def __init__(self, url: str):
        self.url = url

    def post(self, path: str, data: dict | None = None) -> dict:
        response = requests.post(self.url + path, data=data or {}, auth=(SECRET_KEY, ""), timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def get(self, path: str) -> dict:
        response = requests.get(self.url + path, auth=(SECRET_KEY, ""), timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def delete(self, path: str) -> dict:
        response = requests.delete(self.url + path, auth=(SECRET_KEY, ""), timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def register_webhook(self, webhook_url: str, events: list[str]) -> None:
        response = requests.post(
            f"{self.url}/_config/webhooks/kernel-engineering",
            json={"url": webhook_url, "secret": WEBHOOK_SECRET, "events": events},
            timeout=10,
        )
        assert response.status_code == 200, response.text

    def card(self, number: str) -> str:
        return self.post(
            "/v1/payment_methods",
            {
                "type": "card",
                "card[number]": number,
                "card[exp_month]": "12",
                "card[exp_year]": "2034",
                "card[cvc]": "123",
            },
        )["id"]

    def give_card(self, customer_id: str, number: str = "4242424242424242") -> str:
        pm = self.card(number)
        self.post(f"/v1/payment_methods/{pm}/attach", {"customer": customer_id})
        self.post(f"/v1/customers/{customer_id}", {"invoice_settings[default_payment_method]": pm})
        return pm

    def plan(self, plan_id: str, *, amount: int = 1200, interval: str = "month") -> dict:
        try:
            return self.get(f"/v1/plans/{plan_id}")
        except AssertionError:
            return self.post(
                "/v1/plans",
                {
                    "id": plan_id,
                    "amount": amount,
                    "currency": "eur",
                    "interval": interval,
                    "product[name]": "Kernel Engineering",
                },
            )


@pytest.fixture
def stripe_local(localstripe):
    """localstripe, with the site's Stripe settings pointing at it."""
    with stripe_settings(localstripe):
        yield LocalStripe(localstripe)
    # localstripe keeps webhooks for its lifetime: stop deliveries to this test's server.
    requests.post(
        f"{localstripe}/_config/webhooks/kernel-engineering",
        json={"url": "http://127.0.0.1:9/", "secret": "none", "events": []},
        timeout=5,
    )


# --- A real Celery worker on the Redis broker --------------------------------------------------


@pytest.fixture
def eager_celery():
    """Tasks enqueued with .delay() run at once, in this thread; a task's retries run at once too
    (so failures do not propagate: assert on the stored state)."""
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_eager_propagates
    conf.task_always_eager, conf.task_eager_propagates = True, False
    yield
    conf.task_always_eager, conf.task_eager_propagates = saved


@pytest.fixture
def celery_worker():
    celery_app.control.purge()  # messages left by earlier tests (whose rows are gone) are not ours
    with start_worker(
        celery_app, pool="solo", perform_ping_check=False, queues=["default"], shutdown_timeout=10
    ) as worker:
        yield worker


def wait_for(predicate, *, timeout: float = 15, interval: float = 0.1, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {message}")
        time.sleep(interval)


# --- The test-mode stand-in, a real `manage.py stripe_test_server` --------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
TEST_MODE = settings.STRIPE_TEST_MODE_SETTINGS


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    """`manage.py stripe_test_server` as make run starts it; its webhooks go to an address nothing listens on
    (the browser test follows them to the site): here the services and pages are what is tested."""
    port = _free_port()
    var_dir = tmp_path_factory.mktemp("standin")
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "STRIPE_TEST_MODE": "true",
        "STRIPE_API_BASE": f"http://127.0.0.1:{port}",
        "SITE_URL": "http://testserver",
        "VAR_DIR": str(var_dir),
    }
    log = (var_dir / "standin.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "stripe_test_server"],
        cwd=ROOT,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("STRIPE_")}, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = env["STRIPE_API_BASE"]

    def answers():
        assert process.poll() is None, (var_dir / "standin.log").read_text()[-2000:]
        try:
            auth = (TEST_MODE["STRIPE_SECRET_KEY"], "")
            return requests.get(f"{url}/v1/prices/{TEST_MODE['STRIPE_PRICE_MONTHLY']}", auth=auth, timeout=1).ok
        except requests.ConnectionError:
            return False

    wait_for(answers, timeout=60, message="the stand-in to serve its Prices")
    yield url
    process.terminate()
    process.wait(timeout=10)
    log.close()


@pytest.fixture
def test_mode(standin):
    with override_settings(STRIPE_TEST_MODE=True, STRIPE_API_BASE=standin, **TEST_MODE):
        yield standin
