"""Admin (read-only mirror with dashboard links; complimentary access granted and revoked),
the stripe_sync command, and the demo subscriber."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from apps.demo.data import demo_accounts_ensure, demo_subscriber_ensure
from apps.subscriptions.models import ComplimentaryAccess, StripeEvent, Subscription
from tests.factories import UserFactory
from tests.subscriptions.factories import ComplimentaryAccessFactory, CustomerFactory, SubscriptionFactory
from tests.subscriptions.stripe_stub import event_payload, subscription_object
from tests.subscriptions.visitors import stored_access

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


def test_the_stripe_mirror_is_read_only_with_links_to_the_dashboard(admin_client, stripe_stub):
    subscription = SubscriptionFactory(stripe_id="sub_admin1", customer__stripe_id="cus_admin1")
    StripeEvent.objects.create(
        stripe_id="evt_admin1", type="invoice.paid", stripe_created=timezone.now(), payload={"id": "evt_admin1"}
    )

    for model in ("customer", "subscription", "stripeevent"):
        changelist = admin_client.get(f"/admin/subscriptions/{model}/")
        assert changelist.status_code == 200
        assert admin_client.get(f"/admin/subscriptions/{model}/add/").status_code == 403

    page = admin_client.get(f"/admin/subscriptions/subscription/{subscription.pk}/change/").text
    assert 'href="https://dashboard.stripe.com/test/subscriptions/sub_admin1"' in page
    assert 'name="status"' not in page  # no editable fields
    customer_page = admin_client.get(f"/admin/subscriptions/customer/{subscription.customer.pk}/change/").text
    assert 'href="https://dashboard.stripe.com/test/customers/cus_admin1"' in customer_page
    event_page = admin_client.get(f"/admin/subscriptions/stripeevent/{StripeEvent.objects.get().pk}/change/").text
    assert "https://dashboard.stripe.com/test/events/evt_admin1" in event_page
    subscription.customer.livemode = True
    subscription.customer.save()
    page = admin_client.get(f"/admin/subscriptions/customer/{subscription.customer.pk}/change/").text
    assert "https://dashboard.stripe.com/customers/cus_admin1" in page  # a live-mode object: no test/


def test_admins_grant_complimentary_access_with_a_reason_and_an_end_date(admin_client, staff):
    reader = UserFactory()
    ends = (timezone.now() + timedelta(days=30)).replace(microsecond=0)
    now = timezone.now()
    response = admin_client.post(
        "/admin/subscriptions/complimentaryaccess/add/",
        {
            "user": reader.pk,
            "reason": "conference speaker",
            "starts_at_0": now.strftime("%Y-%m-%d"),
            "starts_at_1": now.strftime("%H:%M:%S"),
            "ends_at_0": ends.strftime("%Y-%m-%d"),
            "ends_at_1": ends.strftime("%H:%M:%S"),
        },
    )
    assert response.status_code == 302, response.content
    access = ComplimentaryAccess.objects.get()
    assert (access.user, access.reason, access.granted_by, access.ends_at) == (
        reader,
        "conference speaker",
        staff,
        ends,
    )
    assert stored_access(reader)
    assert not stored_access(reader, now=ends)


def test_admins_revoke_complimentary_access(admin_client, staff):
    access = ComplimentaryAccessFactory()
    response = admin_client.post(
        "/admin/subscriptions/complimentaryaccess/", {"action": "revoke", "_selected_action": [access.pk]}
    )
    assert response.status_code == 302
    access.refresh_from_db()
    assert access.revoked_at is not None and access.revoked_by == staff
    assert not stored_access(access.user)
    assert "Ended or revoked" in admin_client.get("/admin/subscriptions/complimentaryaccess/").text


def test_admins_reprocess_a_failed_event(admin_client, stripe_stub):
    customer = CustomerFactory(stripe_id="cus_r")
    stripe_stub.subscriptions["sub_r"] = subscription_object("sub_r", customer="cus_r")
    event = StripeEvent.objects.create(
        stripe_id="evt_r", type="customer.subscription.updated", stripe_created=timezone.now(), object_id="sub_r",
        payload=event_payload("customer.subscription.updated", stripe_stub.subscriptions["sub_r"], event_id="evt_r"),
        attempts=3, last_error="APIError: earlier",
    )  # fmt: skip
    admin_client.post("/admin/subscriptions/stripeevent/", {"action": "reprocess", "_selected_action": [event.pk]})
    event.refresh_from_db()
    assert event.is_processed and event.last_error == ""
    assert stored_access(customer.user)


# --- stripe_sync --------------------------------------------------------------------------------


def test_stripe_sync_one_customer_writes_what_stripe_holds(stripe_stub):
    customer = CustomerFactory(stripe_id="cus_sync")
    stale = SubscriptionFactory(customer=customer, stripe_id="sub_sync1", status="active")
    stripe_stub.subscriptions["sub_sync1"] = subscription_object("sub_sync1", customer="cus_sync", status="canceled")
    stripe_stub.subscriptions["sub_sync2"] = subscription_object("sub_sync2", customer="cus_sync", status="trialing")
    stripe_stub.subscriptions["sub_else"] = subscription_object("sub_else", customer="cus_someone_else")
    out = StringIO()

    call_command("stripe_sync", "--customer", "cus_sync", stdout=out)

    stale.refresh_from_db()
    assert stale.status == "canceled"
    assert Subscription.objects.get(stripe_id="sub_sync2").status == "trialing"
    assert not Subscription.objects.filter(stripe_id="sub_else").exists()
    assert "2 subscription(s) synced" in out.getvalue()
    (listing,) = stripe_stub.calls("GET", "/v1/subscriptions")
    assert listing.query == {"customer": "cus_sync", "status": "all", "limit": "100"}


def test_stripe_sync_all_skips_customers_who_are_no_readers(stripe_stub):
    CustomerFactory(stripe_id="cus_a")
    stripe_stub.subscriptions["sub_a"] = subscription_object("sub_a", customer="cus_a")
    stripe_stub.subscriptions["sub_b"] = subscription_object("sub_b", customer="cus_unknown")
    out = StringIO()
    call_command("stripe_sync", "--all", stdout=out)
    assert list(Subscription.objects.values_list("stripe_id", flat=True)) == ["sub_a"]
    assert "1 subscription(s) synced from Stripe, 1 skipped" in out.getvalue()


def test_stripe_sync_goes_on_past_a_failing_subscription_and_then_fails(stripe_stub):
    CustomerFactory(stripe_id="cus_a")
    stripe_stub.subscriptions["sub_a"] = subscription_object("sub_a", customer="cus_a")
    stripe_stub.subscriptions["sub_b"] = subscription_object("sub_b", customer="cus_a")
    stripe_stub.failures["/v1/subscriptions/sub_a"] = 1
    err = StringIO()
    with pytest.raises(CommandError, match="1 subscription"):
        call_command("stripe_sync", "--customer", "cus_a", stdout=StringIO(), stderr=err)
    assert "sub_a  failed: APIError" in err.getvalue()
    assert list(Subscription.objects.values_list("stripe_id", flat=True)) == ["sub_b"]


def test_stripe_sync_refuses_bad_arguments_and_reports_stripe_errors(stripe_stub):
    with pytest.raises(CommandError):
        call_command("stripe_sync")
    with pytest.raises(CommandError, match="not a Stripe customer id"):
        call_command("stripe_sync", "--customer", "sub_123")
    stripe_stub.failures["/v1/subscriptions"] = 5
    with pytest.raises(CommandError, match="APIError"):
        call_command("stripe_sync", "--all")
    with override_settings(STRIPE_SECRET_KEY=""), pytest.raises(CommandError, match="STRIPE_SECRET_KEY"):
        call_command("stripe_sync", "--all")


# --- Demo data -------------------------------------------------------------------------------------


def test_the_demo_subscriber_has_full_access_once(stripe_stub):
    demo_accounts_ensure()
    first = demo_subscriber_ensure()
    assert first.reason == "demo" and demo_subscriber_ensure() == first
    from apps.accounts.models import User

    assert stored_access(User.objects.get(email="subscriber@example.com"))
    assert not stored_access(User.objects.get(email="reader@example.com"))
