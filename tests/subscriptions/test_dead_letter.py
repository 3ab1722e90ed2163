"""Stripe events that cannot be processed are dead-lettered after STRIPE_EVENT_MAX_ATTEMPTS failures (issue 28: they
were retried every 5 minutes forever), shown in admin and replayed from there."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.subscriptions import services
from apps.subscriptions.errors import EventProcessingFailed
from apps.subscriptions.models import StripeEvent, Subscription
from apps.subscriptions.tasks import process_stripe_event
from tests.subscriptions.stripe_stub import event_payload
from tests.subscriptions.test_webhook import SUB, _snapshot, customer  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def failing_event(settings, stripe_stub, customer, post_event, django_capture_on_commit_callbacks):  # noqa: F811
    settings.STRIPE_EVENT_MAX_ATTEMPTS = 3
    stripe_stub.subscriptions["sub_one"] = _snapshot()
    stripe_stub.failures[SUB.format("sub_one")] = 100  # Stripe keeps answering 500
    with django_capture_on_commit_callbacks():
        post_event(event_payload("customer.subscription.created", _snapshot()))
    event = StripeEvent.objects.get()
    StripeEvent.objects.filter(pk=event.pk).update(received_at=timezone.now() - timedelta(hours=1))
    for _ in range(3):
        with pytest.raises(EventProcessingFailed):
            process_stripe_event(event.pk)
    event.refresh_from_db()
    return event


def test_after_the_last_attempt_an_event_is_dead_lettered_and_nothing_tries_it_again(
    failing_event, stripe_stub, post_event, django_capture_on_commit_callbacks
):
    assert failing_event.attempts == 3 and failing_event.dead_lettered_at is not None
    assert failing_event.last_error.startswith("APIError")

    with django_capture_on_commit_callbacks() as callbacks:
        assert services.events_retry_unprocessed(older_than=timedelta(0)) == 0  # the 5-minute sweep leaves it
        post_event(failing_event.payload)  # Stripe's redelivery: a duplicate, not queued again
    assert callbacks == []
    calls = len(stripe_stub.requests)
    process_stripe_event(failing_event.pk)  # a retry already scheduled: a no-op now
    failing_event.refresh_from_db()
    assert failing_event.attempts == 3 and not failing_event.is_processed
    assert len(stripe_stub.requests) == calls  # Stripe not even asked


def test_admin_lists_the_dead_letters_and_replays_them(failing_event, stripe_stub, admin_client):
    url = "/admin/subscriptions/stripeevent/"
    listed = admin_client.get(url, {"processed": "dead"}).content.decode()
    assert failing_event.stripe_id in listed
    assert failing_event.stripe_id not in admin_client.get(url, {"processed": "yes"}).content.decode()

    stripe_stub.failures.clear()  # the cause is fixed
    response = admin_client.post(url, {"action": "reprocess", "_selected_action": [failing_event.pk]}, follow=True)
    assert "1 processed, 0 failed" in response.content.decode()
    failing_event.refresh_from_db()
    assert failing_event.is_processed and failing_event.dead_lettered_at is None and failing_event.attempts == 1
    assert Subscription.objects.get().status == "active"
