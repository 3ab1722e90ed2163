"""Pricing, Checkout and the Customer Portal, tested at the HTTP boundary: the official client
talks to a local server that records each request and answers as Stripe does."""

import logging
import time
from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from apps.subscriptions import views
from apps.subscriptions.models import Customer, Subscription
from apps.subscriptions.services.entitlement import reader_trial_mark
from tests.factories import UserFactory
from tests.subscriptions.conftest import PRICE_MONTHLY, PRICE_YEARLY, SECRET_KEY
from tests.subscriptions.factories import ComplimentaryAccessFactory, CustomerFactory, SubscriptionFactory
from tests.subscriptions.stripe_stub import price_object
from tests.subscriptions.visitors import stored_access

pytestmark = pytest.mark.django_db

NO_STRIPE = override_settings(
    STRIPE_SECRET_KEY="", STRIPE_WEBHOOK_SECRET="", STRIPE_PRICE_MONTHLY="", STRIPE_PRICE_YEARLY="", STRIPE_API_BASE=""
)


@pytest.fixture
def priced_stub(stripe_stub):
    stripe_stub.prices[PRICE_MONTHLY] = price_object(PRICE_MONTHLY, amount=1200, interval="month")
    stripe_stub.prices[PRICE_YEARLY] = price_object(PRICE_YEARLY, amount=12000, interval="year")
    return stripe_stub


def signed_in(client, user):
    client.force_login(user)
    return client


# --- Pricing -------------------------------------------------------------------------------------


def test_pricing_without_stripe_keys_tells_the_public_nothing_of_the_configuration(
    client, reader, staff, caplog, monkeypatch
):
    monkeypatch.setattr(views, "_unconfigured_logged", False)
    pages = []
    with NO_STRIPE, caplog.at_level(logging.WARNING, logger="apps.subscriptions.views"):
        for user in (None, reader, staff):
            if user is not None:
                client.force_login(user)
            response = client.get("/pricing/")
            assert response.status_code == 200
            pages.append(response.text)
    for text in pages:
        assert "not open on this site yet" in text and 'name="plan"' not in text
        # Which environment variables to set is for the operator's docs and logs, not for visitors.
        assert "STRIPE_" not in text and "/stripe/webhook/" not in text and "environment variable" not in text
    assert "complimentary access" in pages[2] and "complimentary access" not in pages[1]
    (record,) = [r for r in caplog.records if "Stripe is not configured" in r.getMessage()]  # once, not per visit
    assert all(name in record.getMessage() for name in ("STRIPE_SECRET_KEY", "STRIPE_PRICE_MONTHLY"))


def test_pricing_shows_both_plans_with_amounts_from_stripe_and_what_a_subscriber_gets(client, reader, priced_stub):
    response = signed_in(client, reader).get(reverse("subscriptions:pricing"))
    text = response.text
    assert response.status_code == 200
    assert "€12" in text and "/ month" in text and "€120" in text and "/ year" in text
    assert text.count('name="plan"') == 2 and 'value="monthly"' in text and 'value="yearly"' in text
    assert "All 72 capsules" in text and "Promotion codes" in text
    assert "free trial" not in text

    client.get("/pricing/")  # the Prices are cached: Stripe is not asked on every visit
    assert len(priced_stub.calls("GET", r"/v1/prices/.*")) == 2


def test_pricing_offers_the_configured_trial_and_sign_up_to_visitors(client, priced_stub):
    with override_settings(STRIPE_TRIAL_DAYS=14):
        text = client.get("/pricing/").text
    assert "14-day free trial" in text
    assert "Sign up to subscribe" in text and 'name="plan"' not in text


def test_pricing_offers_the_trial_only_to_readers_who_can_still_get_it(client, priced_stub):
    """Fails on HEAD: a reader who had their trial was still offered "14-day free trial" ("Start your free trial"),
    which Checkout no longer gives them. Visitors are offered it on the public page, as a new reader gets it."""
    fresh, trialed = UserFactory(), UserFactory()
    reader_trial_mark(user_id=trialed.pk, at=timezone.now() - timedelta(days=40))  # as a trialing subscription does
    with override_settings(STRIPE_TRIAL_DAYS=14):
        visitor = Client().get("/pricing/")
        fresh_page = signed_in(Client(), fresh).get("/pricing/")
        trialed_page = signed_in(Client(), trialed).get("/pricing/")
        visitor_after = Client().get("/pricing/")

    assert "14-day free trial" in visitor.text and "public" in visitor["Cache-Control"]
    assert "14-day free trial" in fresh_page.text and "Start your free trial" in fresh_page.text
    assert "free trial" not in trialed_page.text and "Subscribe monthly" in trialed_page.text
    assert "private" in trialed_page["Cache-Control"] and "no-store" in trialed_page["Cache-Control"]
    assert "14-day free trial" in visitor_after.text  # the public copy is not the trialed reader's


def test_pricing_still_renders_when_stripe_is_unreachable(client, reader, stripe_stub):
    stripe_stub.failures[f"/v1/prices/{PRICE_MONTHLY}"] = 5
    text = signed_in(client, reader).get("/pricing/").text
    assert "Billed every month" in text and 'value="monthly"' in text


def test_pricing_tells_subscribers_they_already_have_access(client, priced_stub):
    subscription = SubscriptionFactory()
    text = signed_in(client, subscription.customer.user).get("/pricing/").text
    assert "You already have full access" in text and 'name="plan"' not in text


# --- Checkout ------------------------------------------------------------------------------------


def test_checkout_creates_a_subscription_session_for_the_reader_and_redirects_with_303(client, reader, stripe_stub):
    response = signed_in(client, reader).post(reverse("subscriptions:checkout"), {"plan": "monthly"})

    assert response.status_code == 303
    (customer_call,) = stripe_stub.calls("POST", "/v1/customers")
    (session_call,) = stripe_stub.calls("POST", "/v1/checkout/sessions")
    session_id = stripe_stub.sessions and next(iter(stripe_stub.sessions))
    assert response["Location"] == f"{stripe_stub.url}/pay/{session_id}"

    assert customer_call.form["email"] == reader.email and customer_call.form["metadata[user_id]"] == str(reader.pk)
    assert customer_call.header("Idempotency-Key")
    assert customer_call.header("Authorization") == f"Bearer {SECRET_KEY}"
    form = session_call.form
    customer = Customer.objects.get(user=reader)
    assert form["mode"] == "subscription"
    assert form["customer"] == customer.stripe_id
    assert form["client_reference_id"] == str(reader.pk)
    assert form["line_items[0][price]"] == PRICE_MONTHLY and form["line_items[0][quantity]"] == "1"
    assert form["allow_promotion_codes"] == "true"
    assert form["success_url"] == "http://testserver/billing/success/?session_id={CHECKOUT_SESSION_ID}"
    assert form["cancel_url"] == "http://testserver/billing/cancel/"
    assert form["subscription_data[metadata][user_id]"] == str(reader.pk)
    assert "subscription_data[trial_period_days]" not in form
    # Issue 29: the terms are named on Stripe's page, above its pay button.
    assert form["custom_text[submit][message]"] == (
        "By subscribing you agree to the terms of service: http://testserver/terms/"
    )
    assert not Subscription.objects.exists() and not stored_access(reader)  # nothing granted yet


def test_checkout_reuses_the_readers_stripe_customer_and_offers_the_trial(client, reader, stripe_stub):
    customer = CustomerFactory(user=reader, stripe_id="cus_existing")
    with override_settings(STRIPE_TRIAL_DAYS=14):
        signed_in(client, reader).post(reverse("subscriptions:checkout"), {"plan": "yearly"})
    assert not stripe_stub.calls("POST", "/v1/customers")
    (session_call,) = stripe_stub.calls("POST", "/v1/checkout/sessions")
    assert session_call.form["customer"] == customer.stripe_id
    assert session_call.form["line_items[0][price]"] == PRICE_YEARLY
    assert session_call.form["subscription_data[trial_period_days]"] == "14"


@pytest.mark.parametrize("plan", ["", "weekly", PRICE_MONTHLY, "price_chosen_by_the_browser"])
def test_checkout_accepts_only_the_offered_plans(client, reader, stripe_stub, plan):
    response = signed_in(client, reader).post(reverse("subscriptions:checkout"), {"plan": plan})
    assert response.status_code == 303 and response["Location"] == "/pricing/"
    assert not stripe_stub.requests


def test_checkout_needs_a_signed_in_reader_and_a_post(client, reader, stripe_stub):
    response = client.post(reverse("subscriptions:checkout"), {"plan": "monthly"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert signed_in(client, reader).get(reverse("subscriptions:checkout")).status_code == 302  # back to pricing
    assert not stripe_stub.requests


def test_a_subscriber_is_sent_to_the_account_page_instead_of_a_second_subscription(client, stripe_stub):
    subscription = SubscriptionFactory()
    response = signed_in(client, subscription.customer.user).post(
        reverse("subscriptions:checkout"), {"plan": "monthly"}
    )
    assert response.status_code == 303 and response["Location"] == reverse("accounts:profile")
    assert not stripe_stub.requests


def test_checkout_when_stripe_fails_says_so_and_charges_nothing(client, reader, stripe_stub):
    stripe_stub.failures["/v1/checkout/sessions"] = 5
    response = signed_in(client, reader).post(reverse("subscriptions:checkout"), {"plan": "monthly"}, follow=True)
    assert response.redirect_chain[0] == ("/pricing/", 303)
    assert "could not reach our payment provider" in response.text


def test_checkout_without_configuration_sends_back_to_pricing(client, reader):
    with NO_STRIPE:
        response = signed_in(client, reader).post(reverse("subscriptions:checkout"), {"plan": "monthly"})
    assert response.status_code == 303 and response["Location"] == "/pricing/"


def test_the_success_page_grants_nothing_and_polls_the_stored_state(client, reader, priced_stub):
    signed_in(client, reader).post(reverse("subscriptions:checkout"), {"plan": "monthly"})  # off to Checkout
    requests_before = len(priced_stub.requests)
    response = client.get("/billing/success/?session_id=cs_test_forged")
    assert response.status_code == 200
    assert "Waiting for Stripe" in response.text and 'hx-get="/billing/status/?since=' in response.text
    assert not Subscription.objects.exists() and not stored_access(reader)
    assert len(priced_stub.requests) == requests_before  # the page asks Stripe nothing: only the webhook counts

    SubscriptionFactory(customer=Customer.objects.get(user=reader))  # the webhook has been processed
    fragment = client.get("/billing/status/", headers={"HX-Request": "true"})
    assert "Your subscription is active" in fragment.text and "hx-get" not in fragment.text


def test_the_success_page_without_a_pending_checkout_says_so_and_does_not_wait(client, reader):
    # A free reader who opens the page (a bookmark, the back button) never started a checkout here: nothing will come.
    response = signed_in(client, reader).get("/billing/success/?session_id=cs_test_forged")
    assert response.status_code == 200
    assert "No payment is waiting for confirmation" in response.text
    assert "hx-get" not in response.text and "Waiting for Stripe" not in response.text
    assert 'href="/pricing/"' in response.text and 'href="/accounts/profile/"' in response.text
    fragment = client.get("/billing/status/", headers={"HX-Request": "true"})
    assert "hx-get" not in fragment.text and "No payment is waiting" in fragment.text


def test_the_success_page_stops_polling_when_the_confirmation_is_late(client, reader, priced_stub):
    signed_in(client, reader).post(reverse("subscriptions:checkout"), {"plan": "monthly"})
    since = int(time.time()) - views.CONFIRMATION_WAIT_S - 1
    fragment = client.get(f"/billing/status/?since={since}", headers={"HX-Request": "true"})
    assert "Stripe has not confirmed your payment yet" in fragment.text and "hx-get" not in fragment.text
    assert 'href="/accounts/profile/"' in fragment.text
    # A `since` from the future cannot keep it polling past the limit either: it is clamped to now.
    fragment = client.get("/billing/status/?since=99999999999", headers={"HX-Request": "true"})
    assert "Waiting for Stripe" in fragment.text and "hx-get" in fragment.text


def test_the_cancel_page_charges_nothing(client, reader):
    response = signed_in(client, reader).get("/billing/cancel/")
    assert response.status_code == 200 and "Nothing was charged" in response.text


# --- Portal -------------------------------------------------------------------------------------


def test_the_portal_opens_for_the_readers_customer_with_303(client, stripe_stub):
    subscription = SubscriptionFactory()
    response = signed_in(client, subscription.customer.user).post(reverse("subscriptions:portal"))
    assert response.status_code == 303
    (call,) = stripe_stub.calls("POST", "/v1/billing_portal/sessions")
    assert call.form == {
        "customer": subscription.customer.stripe_id,
        "return_url": "http://testserver/accounts/profile/",
    }
    assert response["Location"].startswith(f"{stripe_stub.url}/portal/bps_")


def test_the_portal_needs_a_post_and_a_billing_account(client, reader, stripe_stub):
    signed_in(client, reader)
    assert client.get(reverse("subscriptions:portal")).status_code == 405
    response = client.post(reverse("subscriptions:portal"))
    assert response.status_code == 303 and response["Location"] == "/pricing/"
    assert not stripe_stub.requests


# --- The account page's billing section -----------------------------------------------------------


def test_billing_section_for_a_free_reader(client, reader, stripe_stub):
    text = signed_in(client, reader).get("/accounts/profile/").text
    assert "Subscription" in text and "See plans" in text and "Manage billing" not in text


def test_billing_section_shows_plan_status_and_renewal(client, stripe_stub):
    subscription = SubscriptionFactory(price_id=PRICE_YEARLY, interval="year", unit_amount=12000)
    text = signed_in(client, subscription.customer.user).get("/accounts/profile/").text
    assert "Yearly" in text and "€120 / year" in text and "Active" in text
    assert "Renews on" in text and f"{subscription.current_period_end:%-d %B %Y}" in text
    assert "Manage billing" in text and "See plans" not in text


def test_billing_section_shows_the_end_of_a_cancelled_subscription(client, stripe_stub):
    subscription = SubscriptionFactory(cancel_at_period_end=True)
    text = signed_in(client, subscription.customer.user).get("/accounts/profile/").text
    assert "Access until" in text and "will not renew" in text and "Active, cancelled" in text


def test_billing_section_shows_the_grace_period_of_a_failed_payment(client, stripe_stub):
    since = timezone.now() - timedelta(days=2)
    subscription = SubscriptionFactory(status="past_due", past_due_since=since)
    text = signed_in(client, subscription.customer.user).get("/accounts/profile/").text
    assert "Past due" in text and "last payment failed" in text and f"{since + timedelta(days=7):%-d %B %Y}" in text


def test_billing_section_for_complimentary_access_and_without_keys(client, reader):
    ComplimentaryAccessFactory(user=reader, ends_at=timezone.now() + timedelta(days=10))
    CustomerFactory(user=reader)
    with NO_STRIPE:
        text = signed_in(client, reader).get("/accounts/profile/").text
    assert "Complimentary access until" in text
    assert "Manage billing" not in text  # no portal without keys


def test_the_nav_links_to_pricing(client):
    text = client.get("/pricing/").text
    assert 'href="/pricing/" aria-current="page">Pricing' in text


def test_the_way_back_to_the_locked_capsule_survives_checkout(client, reader, priced_stub):
    signed_in(client, reader)
    assert 'name="next" value="/capsules/locked-two/"' in client.get("/pricing/?next=/capsules/locked-two/").text
    client.post(reverse("subscriptions:checkout"), {"plan": "monthly", "next": "/capsules/locked-two/"})
    (session_call,) = priced_stub.calls("POST", "/v1/checkout/sessions")
    assert session_call.form["success_url"].endswith("?session_id={CHECKOUT_SESSION_ID}&next=/capsules/locked-two/")

    SubscriptionFactory(customer=Customer.objects.get(user=reader))
    assert (
        'href="/capsules/locked-two/">Continue reading'
        in client.get("/billing/success/?session_id=cs_1&next=/capsules/locked-two/").text
    )


@pytest.mark.parametrize("evil", ["https://evil.example/", "//evil.example/x", "javascript:alert(1)"])
def test_the_way_back_never_leaves_the_site(client, reader, priced_stub, evil):
    signed_in(client, reader)
    assert 'name="next"' not in client.get("/pricing/", {"next": evil}).text
    client.post(reverse("subscriptions:checkout"), {"plan": "monthly", "next": evil})
    (session_call,) = priced_stub.calls("POST", "/v1/checkout/sessions")
    assert "next=" not in session_call.form["success_url"]


def test_a_reader_whose_payment_failed_fixes_the_card_instead_of_subscribing_twice(client, stripe_stub):
    subscription = SubscriptionFactory(status="past_due", past_due_since=timezone.now() - timedelta(days=30))
    reader = subscription.customer.user
    assert not stored_access(reader)
    signed_in(client, reader)
    response = client.post(reverse("subscriptions:checkout"), {"plan": "monthly"})
    assert response.status_code == 303 and response["Location"] == reverse("accounts:profile")
    assert not stripe_stub.requests
    text = client.get("/accounts/profile/").text
    assert "Manage billing" in text and "Subscribe again" not in text


def test_a_former_subscriber_may_subscribe_again(client, stripe_stub):
    subscription = SubscriptionFactory(status="canceled", ended_at=timezone.now())
    signed_in(client, subscription.customer.user)
    assert "Subscribe again" in client.get("/accounts/profile/").text
    response = client.post(reverse("subscriptions:checkout"), {"plan": "monthly"})
    assert response.status_code == 303 and response["Location"].startswith(stripe_stub.url)
    assert not stripe_stub.calls("POST", "/v1/customers")  # the same Stripe customer
