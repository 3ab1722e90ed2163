"""No Stripe secret key or webhook secret in pages, responses, logs, stored errors or the repository."""

import logging
import re
import subprocess
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from apps.subscriptions.models import StripeEvent
from tests.subscriptions.conftest import PRICE_MONTHLY, PRICE_YEARLY, SECRET_KEY, WEBHOOK_SECRET
from tests.subscriptions.factories import CustomerFactory, SubscriptionFactory
from tests.subscriptions.stripe_stub import event_payload, price_object, subscription_object

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SECRETS = (SECRET_KEY, WEBHOOK_SECRET)


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_no_secret_reaches_a_page_a_response_a_stored_error_or_a_log(
    client, reader, staff, stripe_stub, post_event, eager_celery, django_capture_on_commit_callbacks, caplog
):
    caplog.set_level(logging.DEBUG)  # as with LOG_LEVEL=DEBUG
    stripe_stub.prices[PRICE_MONTHLY] = price_object(PRICE_MONTHLY)
    stripe_stub.prices[PRICE_YEARLY] = price_object(PRICE_YEARLY, amount=12000, interval="year")
    customer = CustomerFactory(user=reader, stripe_id="cus_secret")
    SubscriptionFactory(customer=customer, stripe_id="sub_old", status="canceled")
    stripe_stub.subscriptions["sub_one"] = subscription_object("sub_one", customer="cus_secret")
    # A careless upstream that echoes the key it was sent, on two routes.
    stripe_stub.echo_key |= {"/v1/checkout/sessions", "/v1/subscriptions/sub_bad"}
    responses = []

    anonymous = Client()
    responses += [anonymous.get("/pricing/"), anonymous.get("/")]
    client.force_login(reader)
    responses += [
        client.get("/pricing/"),
        client.post("/billing/checkout/", {"plan": "monthly"}, follow=True),  # fails with the echo
        client.post("/billing/portal/"),
        client.get("/accounts/profile/"),
        client.get("/billing/success/?session_id=cs_x"),
        client.get("/billing/status/"),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        responses += [
            post_event(event_payload("customer.subscription.created", stripe_stub.subscriptions["sub_one"])),
            post_event(event_payload("customer.subscription.created", {"id": "sub_bad", "customer": "cus_secret"})),
            post_event(event_payload("invoice.paid", {"id": "in_1"}), secret="whsec_forged"),
        ]
    staff_client = Client()
    staff_client.force_login(staff)
    for url in (
        "/admin/subscriptions/stripeevent/",
        "/admin/subscriptions/subscription/",
        "/admin/subscriptions/customer/",
        "/pricing/",
    ):
        responses.append(staff_client.get(url))
    for event in StripeEvent.objects.all():
        responses.append(staff_client.get(f"/admin/subscriptions/stripeevent/{event.pk}/change/"))

    assert [r.status_code for r in responses if r.status_code >= 500] == []
    for response in responses:
        assert not _leaks(response.content.decode()), response.request["PATH_INFO"]
        assert not _leaks(str(dict(response.items())))

    failed = StripeEvent.objects.get(object_id="sub_bad")
    assert not failed.is_processed and "Invalid API Key provided: [redacted]" in failed.last_error
    logged = caplog.text + "".join(str(vars(record)) for record in caplog.records)
    assert "[redacted]" in logged  # the failure was logged...
    for record in caplog.records:
        assert not _leaks(record.getMessage() + str(vars(record))), (record.name, record.getMessage()[:300])


def test_the_repository_holds_no_real_stripe_secret():
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    real_key = re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{60,}|\bwhsec_[0-9A-Za-z]{32,}")
    offenders = []
    for name in listing.stdout.splitlines():
        path = ROOT / name
        if path.is_file() and path.stat().st_size < 2_000_000:
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            if real_key.search(text) or any(
                secret in text for secret in SECRETS if name != "tests/subscriptions/conftest.py"
            ):
                offenders.append(name)
    assert offenders == []
    env_example = (ROOT / ".env.example").read_text()
    assert re.search(r"^STRIPE_SECRET_KEY=$", env_example, re.M) and re.search(
        r"^STRIPE_WEBHOOK_SECRET=$", env_example, re.M
    )


def test_the_secret_settings_come_from_the_environment_only():
    source = (ROOT / "config" / "settings" / "base.py").read_text()
    assert 'STRIPE_SECRET_KEY = env_str("STRIPE_SECRET_KEY", "")' in source
    assert 'STRIPE_WEBHOOK_SECRET = env_str("STRIPE_WEBHOOK_SECRET", "")' in source
    for module in ("dev.py", "test.py", "prod.py"):
        assert "STRIPE_SECRET_KEY =" not in (ROOT / "config" / "settings" / module).read_text()


def test_stored_events_keep_the_payload_not_the_signature(stripe_stub, post_event):
    post_event(
        event_payload(
            "customer.created", {"id": "cus_1", "object": "customer", "created": int(timezone.now().timestamp())}
        )
    )
    assert "v1=" not in str(StripeEvent.objects.get().payload)
