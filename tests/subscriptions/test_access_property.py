"""Issue 42's property: whatever happens (Stripe's events in any order, lost or duplicated; grants, revocations and
deletions; saves of stale user objects; the clock moving on), after the next reconciliation the stored access is
what the facts give, and never reaches past the bounded window. Stripe is the recording stand-in, whose state this
test sets; the clock is moved by standing in for django.utils.timezone.now."""

import itertools
from datetime import timedelta
from unittest import mock

import pytest
from django.conf import settings
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from apps.accounts.models import User
from apps.subscriptions import services
from apps.subscriptions.models import ComplimentaryAccess, Subscription
from apps.subscriptions.services.entitlement import entitlement_from, subscription_window
from tests.subscriptions.factories import CustomerFactory
from tests.subscriptions.stripe_stub import event_payload, subscription_object

pytestmark = pytest.mark.django_db

_examples = itertools.count()
STATUSES = ("active", "trialing", "past_due", "canceled", "unpaid")

steps = st.lists(
    st.one_of(
        st.tuples(st.just("stripe"), st.sampled_from(STATUSES), st.integers(-40, 40), st.booleans()),
        st.tuples(st.just("deliver"), st.integers(0, 9), st.booleans()),  # which pending event; twice?
        st.tuples(st.just("grant"), st.integers(-48, 48), st.one_of(st.none(), st.integers(1, 400))),
        st.tuples(st.just("revoke"), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.integers(0, 3)),
        st.tuples(st.just("save")),
        st.tuples(st.just("clock"), st.integers(1, 24 * 40)),
    ),
    max_size=12,
)


@hypothesis_settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(steps=steps)
def test_stored_access_is_the_facts_after_reconciliation_and_never_unbounded(stripe_stub, steps):
    clock = [timezone.now()]
    with mock.patch("django.utils.timezone.now", lambda: clock[0]):
        _run(stripe_stub, steps, clock)


def _run(stripe_stub, steps, clock):
    n = next(_examples)
    customer = CustomerFactory(stripe_id=f"cus_prop{n}")
    reader, sub_id = customer.user, f"sub_prop{n}"
    stale = User.objects.get(pk=reader.pk)  # loaded once, saved whole later: must never write access
    pending, snapshots = [], []
    for step in steps:
        now = clock[0]
        if step[0] == "stripe":
            _, status, period_days, cancel = step
            sub = subscription_object(
                sub_id, customer=customer.stripe_id, status=status, cancel_at_period_end=cancel,
                period_end=int((now + timedelta(days=period_days)).timestamp()), created=int(now.timestamp()),
            )  # fmt: skip
            stripe_stub.subscriptions[sub_id] = sub
            snapshots.append(sub)
            kind = "customer.subscription.deleted" if status == "canceled" else "customer.subscription.updated"
            pending.append(event_payload(kind, dict(sub), created=int(now.timestamp())))
        elif step[0] == "deliver" and pending:
            event = pending.pop(step[1] % len(pending))  # any order; those never picked are lost
            for _ in range(2 if step[2] else 1):
                stored, _ = services.event_record(event=event)
                services.event_process(event_id=stored.pk)
        elif step[0] == "grant":
            starts = now + timedelta(hours=step[1])
            ends = None if step[2] is None else starts + timedelta(hours=step[2])
            services.complimentary_access_grant(user=reader, reason="property", starts_at=starts, ends_at=ends)
        elif step[0] in ("revoke", "delete"):
            grants = list(ComplimentaryAccess.objects.filter(user=reader).order_by("pk"))
            if grants:
                grant = grants[step[1] % len(grants)]
                if step[0] == "revoke":
                    services.complimentary_access_revoke(access=grant)
                else:
                    services.complimentary_access_delete(accesses=ComplimentaryAccess.objects.filter(pk=grant.pk))
        elif step[0] == "save":
            stale.name = f"Reader {len(steps)}"
            stale.save()
        elif step[0] == "clock":
            clock[0] = now + timedelta(hours=step[1])

    now = clock[0]
    services.subscriptions_reconcile(now=now)

    reader = User.objects.get(pk=reader.pk)
    rows = list(Subscription.objects.filter(customer__user=reader))
    grants = list(ComplimentaryAccess.objects.filter(user=reader))
    grace = timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS)
    expected = entitlement_from(rows, grants, now=now, grace=grace)
    assert (reader.access_source, reader.access_from, reader.access_until) == (
        expected.source,
        expected.starts_at,
        expected.ends_at,
    )

    margin = timedelta(hours=settings.SUBSCRIPTION_RENEWAL_MARGIN_HOURS)
    for row in rows:
        window = subscription_window(row, grace=grace)
        # Bounded: no stored subscription gives access past its period's end (or its grace) plus the margin.
        assert window is None or window[1] <= max(row.current_period_end + margin, (row.past_due_since or now) + grace)
        # Reconciled: a window ending before the next daily run was re-read, so it is what Stripe holds now.
        if window is not None and window[1] <= now + timedelta(days=1):
            assert row.status == stripe_stub.subscriptions[sub_id]["status"]
    open_ended_grant = any(g.revoked_at is None and g.ends_at is None for g in grants)
    assert reader.access_until is not None or not reader.access_source or open_ended_grant
