"""Issue 42, "Access that fails closed": driven through the real admin, allauth's password change, the signed webhook
and the Stripe stand-in. Each numbered test failed before the fix (see the assertion named in its docstring)."""

import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from apps.accounts.admin import UserAdmin
from apps.accounts.models import User
from apps.subscriptions import services
from apps.subscriptions.models import ComplimentaryAccess, StripeEvent, Subscription, TrialFingerprint
from apps.subscriptions.tasks import process_stripe_event
from tests.factories import PASSWORD, UserFactory
from tests.subscriptions.factories import ComplimentaryAccessFactory, CustomerFactory
from tests.subscriptions.stripe_stub import event_payload, subscription_object
from tests.subscriptions.visitors import stored_access

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


def margin():
    return timedelta(hours=settings.SUBSCRIPTION_RENEWAL_MARGIN_HOURS)


@pytest.fixture
def deliver(post_event, eager_celery, django_capture_on_commit_callbacks):
    """Stripe sends a signed event to the webhook; the worker (eager) re-reads the subscription from the stand-in."""

    def deliver(event_type: str, obj: dict):
        with django_capture_on_commit_callbacks(execute=True):
            assert post_event(event_payload(event_type, obj)).status_code == 200

    return deliver


# --- 1. A deleted grant takes the access with it ---------------------------------------------------


def test_1_deleting_a_grant_on_its_admin_delete_page_ends_the_access(admin_client):
    """Before: the reader's stored access stayed `complimentary` with no end (`not stored_access` failed)."""
    grant = ComplimentaryAccessFactory(reason="review copy")
    assert stored_access(grant.user)

    response = admin_client.post(
        reverse("admin:subscriptions_complimentaryaccess_delete", args=[grant.pk]), {"post": "yes"}
    )

    assert response.status_code == 302 and not ComplimentaryAccess.objects.exists()
    assert not stored_access(grant.user)
    assert not stored_access(grant.user, now=timezone.now() + timedelta(days=4000))


def test_1_deleting_grants_with_the_bulk_action_ends_their_access_and_keeps_the_others(admin_client):
    """Before: both readers kept `complimentary` access for ever."""
    deleted = [ComplimentaryAccessFactory(), ComplimentaryAccessFactory()]
    kept = ComplimentaryAccessFactory()

    response = admin_client.post(
        reverse("admin:subscriptions_complimentaryaccess_changelist"),
        {"action": "delete_selected", "_selected_action": [g.pk for g in deleted], "post": "yes"},
    )

    assert response.status_code == 302
    assert [stored_access(g.user) for g in deleted] == [False, False] and stored_access(kept.user)


def test_1_a_grant_deleted_behind_the_services_back_is_caught_on_commit(django_capture_on_commit_callbacks):
    grant = ComplimentaryAccessFactory()
    with django_capture_on_commit_callbacks(execute=True):
        ComplimentaryAccess.objects.filter(pk=grant.pk).delete()  # a shell, a script
    assert not stored_access(grant.user)


# --- 2. A full save of a stale user never writes access --------------------------------------------


@pytest.fixture
def during_password_hashing(monkeypatch):
    """Runs `change` while allauth hashes the new password: after the view loaded the reader, before it saves."""

    def install(change):
        original = User.set_password

        def set_password(self, raw_password):
            original(self, raw_password)
            change()

        monkeypatch.setattr(User, "set_password", set_password)

    return install


def _change_password(client):
    new = "a-brand-new-passphrase-42"
    response = client.post(
        reverse("account_change_password"), {"oldpassword": PASSWORD, "password1": new, "password2": new}
    )
    assert response.status_code == 302
    return new


def test_2_a_password_change_during_a_revocation_does_not_restore_the_access(client, during_password_hashing):
    """Before: allauth's user.save() wrote `complimentary`, no end, back (`not stored_access` failed)."""
    grant = ComplimentaryAccessFactory()
    reader = grant.user
    client.force_login(reader)
    during_password_hashing(lambda: services.complimentary_access_revoke(access=grant))

    new = _change_password(client)

    reader.refresh_from_db()
    assert reader.check_password(new)
    assert not stored_access(reader)


def test_2_a_password_change_during_a_grant_does_not_wipe_it(client, reader, during_password_hashing):
    """Before: the new grant's access was overwritten with the empty values loaded with the request."""
    client.force_login(reader)
    during_password_hashing(lambda: services.complimentary_access_grant(user=reader, reason="author"))

    _change_password(client)

    assert stored_access(reader)


def test_2_saving_a_reader_in_admin_during_a_grant_does_not_wipe_it(admin_client, reader, monkeypatch):
    """Before: admin's save of the reader loaded before the grant wrote their empty access back."""
    original = UserAdmin.save_model

    def save_model(self, request, obj, form, change):
        services.complimentary_access_grant(user=obj, reason="support gesture")  # between loading and saving
        original(self, request, obj, form, change)

    monkeypatch.setattr(UserAdmin, "save_model", save_model)

    response = admin_client.post(
        reverse("admin:accounts_user_change", args=[reader.pk]),
        {"email": reader.email, "name": "Renamed", "is_active": "on"},
    )

    assert response.status_code == 302
    reader.refresh_from_db()
    assert reader.name == "Renamed" and stored_access(reader)


def test_2_no_save_writes_the_access_columns_only_the_service_does(reader):
    stale = User.objects.get(pk=reader.pk)
    services.complimentary_access_grant(user=reader, reason="author")
    stale.access_source, stale.trial_used_at = "", timezone.now()
    stale.save()
    stale.save(update_fields=["access_source", "name"])
    fresh = User.objects.get(pk=reader.pk)
    assert fresh.access_source == "complimentary" and fresh.trial_used_at is None


# --- 3. A subscription's access is bounded, and reconciled with Stripe ------------------------------


def test_3_a_lost_deleted_event_ends_access_with_the_period_and_reconciliation_ends_it_sooner(stripe_stub, deliver):
    """Before: active meant access with no end (`not stored_access(... +4000 days)` failed)."""
    customer = CustomerFactory(stripe_id="cus_lost")
    sub = subscription_object("sub_lost", customer="cus_lost", period_days=30)
    stripe_stub.subscriptions["sub_lost"] = sub
    deliver("customer.subscription.created", sub)
    reader, period_end = customer.user, Subscription.objects.get().current_period_end
    assert stored_access(reader)

    sub.update(status="canceled", ended_at=int(time.time()))  # Stripe ends it; its deleted event is lost

    assert not stored_access(reader, now=timezone.now() + timedelta(days=4000))
    assert stored_access(reader, now=period_end + margin() - timedelta(seconds=1))
    assert not stored_access(reader, now=period_end + margin())

    report = services.subscriptions_reconcile(now=period_end + margin() - timedelta(hours=12))
    assert report.synced == ["sub_lost"] and stripe_stub.calls("GET", "/v1/subscriptions/sub_lost")
    assert not stored_access(reader)


def test_3_a_trial_that_ended_gives_nothing_once_its_margin_is_over(stripe_stub, deliver):
    """Before: trialing meant access with no end, whatever trial_end said."""
    customer = CustomerFactory(stripe_id="cus_trial_over")
    ended = int(time.time() - 3 * 86400)
    sub = subscription_object(
        "sub_trial_over", customer="cus_trial_over", status="trialing", trial_end=ended, period_end=ended
    )
    stripe_stub.subscriptions["sub_trial_over"] = sub
    deliver("customer.subscription.created", sub)
    assert not stored_access(customer.user)


def test_3_a_period_that_ended_ten_days_ago_gives_nothing_until_stripe_says_it_renewed(stripe_stub, deliver):
    """Before: access with no end. After: none, and the reconciliation finds the renewal whose events were lost."""
    customer = CustomerFactory(stripe_id="cus_stale")
    sub = subscription_object("sub_stale", customer="cus_stale", period_days=-10)
    stripe_stub.subscriptions["sub_stale"] = sub
    deliver("customer.subscription.updated", sub)
    assert not stored_access(customer.user)

    renewed = subscription_object("sub_stale", customer="cus_stale", period_days=20)
    stripe_stub.subscriptions["sub_stale"] = renewed  # renewed at Stripe; invoice.paid never arrived

    services.subscriptions_reconcile()
    assert stored_access(customer.user)
    assert not stored_access(customer.user, now=timezone.now() + timedelta(days=20) + margin())


def test_3_the_reconciliation_rereads_subscriptions_of_failed_events_and_leaves_far_windows_alone(stripe_stub, deliver):
    far = subscription_object("sub_far", customer=CustomerFactory(stripe_id="cus_far").stripe_id, period_days=20)
    stripe_stub.subscriptions["sub_far"] = far
    deliver("customer.subscription.created", far)
    failed = subscription_object("sub_failed", customer=CustomerFactory(stripe_id="cus_failed").stripe_id)
    stripe_stub.subscriptions["sub_failed"] = failed
    StripeEvent.objects.create(
        stripe_id="evt_failed", type="invoice.paid", stripe_created=timezone.now(), object_id="in_1",
        payload=event_payload("invoice.paid", {"id": "in_1", "subscription": "sub_failed"}), attempts=2,
        last_error="APIError: Stripe was down",
    )  # fmt: skip
    stripe_stub.requests.clear()

    report = services.subscriptions_reconcile()

    assert report.synced == ["sub_failed"] and report.failed == []
    assert Subscription.objects.filter(stripe_id="sub_failed").exists()


def test_3_the_daily_reconciliation_is_scheduled():
    entry = settings.CELERY_BEAT_SCHEDULE["subscriptions-reconcile"]
    assert entry["task"] == "apps.subscriptions.tasks.reconcile_subscriptions" and entry["schedule"] <= 86400


# --- Dead letters: mailed to the operators, shown on admin's index until replayed ---------------------


def test_a_dead_letter_mails_the_operators_once_and_shows_on_the_admin_index_until_replayed(
    settings, stripe_stub, post_event, admin_client, mailoutbox, django_capture_on_commit_callbacks
):
    settings.STRIPE_EVENT_MAX_ATTEMPTS, settings.OPERATOR_EMAIL = 1, "ops@example.org"
    CustomerFactory(stripe_id="cus_dead")
    stripe_stub.subscriptions["sub_dead"] = subscription_object("sub_dead", customer="cus_dead")
    stripe_stub.failures["/v1/subscriptions/sub_dead"] = 1
    with django_capture_on_commit_callbacks():
        post_event(event_payload("customer.subscription.updated", stripe_stub.subscriptions["sub_dead"]))
    event = StripeEvent.objects.get()
    with pytest.raises(Exception):  # noqa: B017 - the task's redacted failure
        process_stripe_event(event.pk)

    (mail,) = mailoutbox
    assert mail.to == ["ops@example.org"] and event.stripe_id in mail.subject
    assert services.dead_letters_notify() == 0  # once
    index = admin_client.get(reverse("admin:index")).text
    assert "1 Stripe event dead-lettered" in index and "/admin/subscriptions/stripeevent/?processed=dead" in index

    services.event_replay(event_id=event.pk)
    assert "dead-lettered" not in admin_client.get(reverse("admin:index")).text


# --- 5. One trial per person ---------------------------------------------------------------------------


def _subscribe(client, stripe_stub, deliver, user) -> tuple[dict, dict]:
    """The reader subscribes: the site's Checkout, Stripe's hosted page, the webhooks. (session form, subscription)"""
    client.force_login(user)
    response = client.post(reverse("subscriptions:checkout"), {"plan": "monthly"})
    assert response.status_code == 303
    session_id = response["Location"].rsplit("/", 1)[1]
    sub = stripe_stub.complete_checkout(session_id)
    deliver("customer.subscription.created", sub)
    completed = {
        "id": session_id,
        "object": "checkout.session",
        "mode": "subscription",
        "status": "complete",
        "customer": sub["customer"],
        "subscription": sub["id"],
        "client_reference_id": str(user.pk),
    }
    deliver("checkout.session.completed", completed)
    return stripe_stub.sessions[session_id], sub


TRIAL = "subscription_data[trial_period_days]"


def test_5_subscribe_cancel_subscribe_gives_one_trial(settings, client, reader, stripe_stub, deliver):
    """Before: the second Checkout offered trial_period_days again (`TRIAL not in second` failed)."""
    settings.STRIPE_TRIAL_DAYS = 14
    first, sub = _subscribe(client, stripe_stub, deliver, reader)
    assert first[TRIAL] == "14" and Subscription.objects.get().status == "trialing"
    reader.refresh_from_db()
    assert reader.trial_used_at is not None and stored_access(reader)

    sub.update(status="canceled", ended_at=int(time.time()))
    deliver("customer.subscription.deleted", sub)
    assert not stored_access(reader)

    second, _ = _subscribe(client, stripe_stub, deliver, reader)
    assert TRIAL not in second


def test_5_a_new_account_with_a_card_that_trialed_has_its_trial_ended_at_once(settings, client, stripe_stub, deliver):
    """Before: the second reader kept their trial (`status == "active"` and the call to end it failed)."""
    settings.STRIPE_TRIAL_DAYS = 14
    first_reader, second_reader = UserFactory(), UserFactory()
    _, first_sub = _subscribe(client, stripe_stub, deliver, first_reader)
    assert TrialFingerprint.objects.get().user == first_reader

    session, second_sub = _subscribe(client, stripe_stub, deliver, second_reader)  # the same card

    assert session[TRIAL] == "14"  # nothing known of the card before Checkout
    (ended,) = stripe_stub.calls("POST", f"/v1/subscriptions/{second_sub['id']}")
    assert ended.form == {"trial_end": "now"}
    assert Subscription.objects.get(stripe_id=second_sub["id"]).status == "active"
    assert Subscription.objects.get(stripe_id=first_sub["id"]).status == "trialing"  # the first trial stands
    assert stored_access(second_reader)  # a paying subscriber now


def test_5_a_different_card_keeps_its_trial(settings, client, stripe_stub, deliver):
    settings.STRIPE_TRIAL_DAYS = 14
    _subscribe(client, stripe_stub, deliver, UserFactory())
    stripe_stub.card_fingerprint = "fp_stub_other_card"
    _, sub = _subscribe(client, stripe_stub, deliver, UserFactory())
    assert not stripe_stub.calls("POST", f"/v1/subscriptions/{sub['id']}")
    assert Subscription.objects.get(stripe_id=sub["id"]).status == "trialing"
