"""Property tests through Django's test client (issue 20): whatever a client sends, the Stripe webhook
(with a valid signature), the review form and the submission form answer 2xx, 3xx or 4xx; never a 500."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reviews.conftest import make_reader
from tests.submissions.test_views import LOCKED_SUBMIT, NAIVE, client_for, locked_exercise, subscriber  # noqa: F401
from tests.subscriptions.conftest import WEBHOOK_SECRET
from tests.subscriptions.stripe_stub import sign

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

WEB = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Text a browser can send: any character but lone surrogates, which no UTF-8 request can carry.
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)
EVENT_TYPES = st.sampled_from(["invoice.paid", "customer.subscription.updated", "checkout.session.completed", "x"])


def _event(fields: dict) -> dict:
    event = {"id": "evt_fuzz", "type": "invoice.paid", "data": {"object": {"id": "in_1"}}}
    event.update(fields)
    return event


EVENTS = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {},
        optional={
            "id": JSON | TEXT,
            "type": JSON | EVENT_TYPES | TEXT,
            "created": JSON | st.integers(),
            "api_version": JSON | TEXT,
            "livemode": JSON,
            "object": st.sampled_from(["event", "v2.core.event"]) | JSON,
            "data": JSON | st.fixed_dictionaries({"object": JSON}),
        },
    ).map(_event),
)


@pytest.fixture
def webhook_secret(settings):
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET


def _post_signed(client, body: bytes):
    return client.post(
        "/stripe/webhook/",
        data=body,
        content_type="application/json",
        headers={"Stripe-Signature": sign(body, WEBHOOK_SECRET)},
    )


@WEB
@given(EVENTS)
def test_any_signed_json_body_is_answered_without_a_server_error(webhook_secret, client, event):
    response = _post_signed(client, json.dumps(event).encode())
    assert response.status_code < 500


@WEB
@given(st.binary(max_size=300))
def test_any_signed_bytes_are_answered_without_a_server_error(webhook_secret, client, body):
    assert _post_signed(client, body).status_code < 500


FORM_VALUE = st.one_of(TEXT, st.integers().map(str), st.sampled_from(["", "0", "5", "6", "-1", "4.5", "x" * 20_000]))


@WEB
@given(
    rating=FORM_VALUE, title=FORM_VALUE, text=FORM_VALUE, url=st.sampled_from(["/reviews/new/", "/reviews/mine/edit/"])
)
def test_any_review_form_values_are_answered_without_a_server_error(mini_book, rating, title, text, url):
    from django.test import Client

    client = Client()
    client.force_login(make_reader(mini_book))
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = client.post(url, {"rating": rating, "title": title, "text": text}, **headers)
        assert response.status_code < 500


@WEB
@given(
    source=st.one_of(TEXT, st.just(NAIVE), TEXT.map(lambda t: NAIVE + t)),
    plan=st.one_of(st.none(), TEXT, st.sampled_from(["[[launch]]", "*/", "/* @plan\n*/", "[" * 5_000])),
    htmx=st.booleans(),
)
def test_any_submission_form_values_are_answered_without_a_server_error(
    locked_exercise,  # noqa: F811
    subscriber,  # noqa: F811
    source,
    plan,
    htmx,
):
    data = {"source": source} if plan is None else {"source": source, "plan": plan}
    response = client_for(subscriber).post(LOCKED_SUBMIT, data, **({"HTTP_HX_REQUEST": "true"} if htmx else {}))
    assert response.status_code < 500
