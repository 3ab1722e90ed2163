"""The subscription journey in a real browser. Stripe's hosted Checkout and Customer Portal are
stood in for at the HTTP boundary (tests/subscriptions/stripe_stub.py): the browser is really
redirected there (303), and "Stripe" really delivers signed webhooks over HTTP to the live
server, which a real Celery worker processes by re-reading the subscription from "Stripe"."""

import re
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from apps.subscriptions.models import Subscription
from tests.conftest import LOCKED_SENTINELS
from tests.factories import PASSWORD, UserFactory
from tests.subscriptions.conftest import (  # noqa: F401  (_stub_server, celery_worker, stripe_stub: fixtures)
    PRICE_MONTHLY,
    PRICE_YEARLY,
    WEBHOOK_SECRET,
    _stub_server,
    celery_worker,
    stripe_stub,
    wait_for,
)
from tests.subscriptions.stripe_stub import price_object

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LOCKED = "/capsules/locked-two/"


def test_a_reader_subscribes_at_a_locked_capsule_reads_it_cancels_and_loses_access_when_the_period_ends(
    page,
    live_server,
    mini_book,
    stripe_stub,
    celery_worker,
    mailoutbox,  # noqa: F811
):
    stripe_stub.prices[PRICE_MONTHLY] = price_object(PRICE_MONTHLY, amount=1200)
    stripe_stub.prices[PRICE_YEARLY] = price_object(PRICE_YEARLY, amount=12000, interval="year")
    stripe_stub.webhook_url, stripe_stub.webhook_secret = f"{live_server.url}/stripe/webhook/", WEBHOOK_SECRET
    reader = UserFactory(email="journey@example.org")

    # Sign in, and meet a locked capsule.
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=login]", reader.email)
    page.fill("input[name=password]", PASSWORD)
    page.locator("main form button[type=submit]").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    page.goto(live_server.url + LOCKED)
    expect(page.locator(".paywall")).to_contain_text("This capsule is for subscribers")
    expect(page.locator("#capsule-body")).to_have_count(0)

    # To pricing, and subscribe monthly: Checkout (stood in) takes the payment.
    page.get_by_role("link", name="See plans and subscribe").click()
    expect(page).to_have_url(re.compile(r"/pricing/\?next="))
    expect(page.locator(".pricing-plan").first).to_contain_text("€12")
    page.get_by_role("button", name="Subscribe monthly").click()

    # Back on the site: the success page waits for the webhook, then opens the way back.
    expect(page).to_have_url(re.compile(r"/billing/success/\?session_id=cs_test_"))
    expect(page.locator("#access-status")).to_contain_text("Your subscription is active", timeout=20_000)
    (session,) = stripe_stub.calls("POST", "/v1/checkout/sessions")
    assert session.form["client_reference_id"] == str(reader.pk)
    assert [status for _, status in stripe_stub.deliveries] == [200, 200]

    page.get_by_role("link", name="Continue reading").click()
    expect(page).to_have_url(re.compile(re.escape(LOCKED) + "$"))
    expect(page.locator("#capsule-body")).to_contain_text(LOCKED_SENTINELS[0])
    expect(page.locator(".paywall")).to_have_count(0)

    # The account page shows the plan; the portal (stood in) cancels at the end of the period.
    page.goto(live_server.url + "/accounts/profile/")
    billing = page.locator("#billing")
    expect(billing).to_contain_text("Monthly")
    expect(billing).to_contain_text("Renews on")
    billing.get_by_role("button", name="Manage billing").click()
    expect(page.get_by_role("heading", name="Manage your subscription")).to_be_visible()
    page.get_by_role("button", name="Cancel subscription").click()
    expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
    subscription = wait_for(
        lambda: Subscription.objects.filter(cancel_at_period_end=True).first(), message="the cancellation webhook"
    )
    page.reload()
    expect(page.locator("#billing")).to_contain_text("will not renew")

    # Until the period ends the capsule stays open...
    page.goto(live_server.url + LOCKED)
    expect(page.locator("#capsule-body")).to_be_visible()
    # ...and once it has ended, it is locked again, before Stripe's `deleted` event arrives. Rather
    # than waiting out a month, "Stripe" brings the end to a second from now (an `updated` event,
    # while the period still runs); what locks the capsule then is only the time passing.
    stripe_stub.schedule_cancel(subscription.stripe_id, seconds_left=1)
    wait_for(
        lambda: (
            Subscription.objects.get(pk=subscription.pk).current_period_end
            < subscription.current_period_end - timedelta(days=1)
        ),
        message="the period's new end",
    )

    def paywall_after_reload():
        page.reload()
        return page.locator(".paywall").count() == 1

    wait_for(paywall_after_reload, interval=0.25, message="the paywall once the period has ended")
    assert Subscription.objects.get(pk=subscription.pk).status == "active"  # no `deleted` event yet
    expect(page.locator("#capsule-body")).to_have_count(0)
    assert LOCKED_SENTINELS[0] not in page.content()

    # Stripe then ends the subscription; the account page offers to subscribe again.
    stripe_stub.end_period(subscription.stripe_id)
    wait_for(lambda: Subscription.objects.get(pk=subscription.pk).status == "canceled", message="the deleted webhook")
    page.goto(live_server.url + "/accounts/profile/")
    expect(page.locator("#billing")).to_contain_text("Canceled")
    expect(page.locator("#billing").get_by_role("link", name="Subscribe again")).to_be_visible()
    wait_for(lambda: len(mailoutbox) == 2, message="the two cancellation emails")
    assert [m.subject.split("] ")[1].split(" on ")[0] for m in mailoutbox] == [
        "Your subscription will end",
        "Your subscription has ended",
    ]
