"""A reader with something of every kind the site keeps about a person, and the check that none of it remains
after their account is deleted (tests/accounts/test_account_deletion.py, tests/e2e/test_account_deletion.py)."""

import hashlib
from dataclasses import dataclass

from django.apps import apps
from django.conf import settings
from django.db import models

from apps.reading.services import progress_record
from apps.reviews.models import BookRating, Review
from apps.reviews.services import review_create, review_report
from apps.submissions.models import Exercise, Submission
from apps.subscriptions.models import StripeEvent
from tests.factories import UserFactory
from tests.subscriptions.factories import ComplimentaryAccessFactory, SubscriptionFactory


@dataclass
class Traces:
    pk: int
    email: str
    name: str
    customer_id: str
    review_text: str
    source_marker: str


def reader_with_everything(book, *, email="leaving.reader@example.org", subscription_status="canceled") -> Traces:
    """A reader who read, reviewed, reported another review, submitted a kernel, had a subscription (ended, by
    default, so that nothing blocks the deletion), complimentary access and Stripe events about their customer."""
    user = UserFactory(email=email, name="Leaving Reader")
    other = UserFactory(email="staying.reader@example.org", name="Staying Reader")
    free = book.capsules.get(number=1)
    for each in (user, other):
        progress_record(user=each, capsule=free, position=0.5, heading="tiles")
    review_text = "A personal review that must not survive the account deletion."
    review_create(user=user, book=book, rating=5, title="Mine", text=review_text)
    theirs = review_create(user=other, book=book, rating=3, title="Theirs", text="A review that stays with its author.")
    review_report(review=theirs, reporter=user, reason="other", note="A report by the leaving reader.")
    exercise = Exercise.objects.create(
        capsule=free, problem="vector_add", title="Add", statement="Add.", starter_source="x", starter_name="x.cu"
    )
    marker = "// LEAVING-READER-KERNEL"
    source = f"{marker}\n__global__ void k() {{}}\n"
    Submission.objects.create(
        user=user,
        exercise=exercise,
        source=source,
        source_sha256=hashlib.sha256(source.encode()).hexdigest(),
        gpu_kind="h200",
        arch="sm_90",
    )
    subscription = SubscriptionFactory(customer__user=user, status=subscription_status)
    customer_id = subscription.customer.stripe_id
    ComplimentaryAccessFactory(user=user, reason="Beta reader")
    for n, payload_object in enumerate(({"id": customer_id, "object": "customer"}, {"customer": customer_id})):
        StripeEvent.objects.create(
            stripe_id=f"evt_leaving_{n}",
            type="customer.updated" if n == 0 else "invoice.paid",
            stripe_created="2026-12-01T00:00:00Z",
            object_id=payload_object.get("id", "in_1"),
            payload={"data": {"object": payload_object}},
        )
    return Traces(user.pk, user.email, user.name, customer_id, review_text, marker)


def rows_left(traces: Traces) -> list[str]:
    """Every row of every model that still points at the reader or holds something of theirs (their email, name,
    Stripe customer, review text, kernel source), anywhere in the database."""
    left = []
    needles = (traces.email, traces.name, traces.customer_id, traces.review_text, traces.source_marker)
    for model in apps.get_models():
        manager = model._base_manager
        for field in model._meta.get_fields():
            if not field.concrete:
                continue
            if field.is_relation and field.related_model is apps.get_model(settings.AUTH_USER_MODEL):
                if manager.filter(**{field.attname: traces.pk}).exists():
                    left.append(f"{model._meta.label}.{field.name} -> the reader")
            elif isinstance(field, models.CharField | models.TextField):
                for needle in needles:
                    if manager.filter(**{f"{field.name}__icontains": needle}).exists():
                        left.append(f"{model._meta.label}.{field.name} holds {needle!r}")
            elif isinstance(field, models.JSONField):
                for row in manager.values_list(field.name, flat=True):
                    if any(needle.lower() in str(row).lower() for needle in needles):
                        left.append(f"{model._meta.label}.{field.name} holds something of theirs")
                        break
    user_model = apps.get_model(settings.AUTH_USER_MODEL)
    if user_model.objects.filter(pk=traces.pk).exists():
        left.append("the account itself")
    return left


def rating_counts(book) -> tuple[int, int]:
    rating = BookRating.objects.get(book=book)
    return rating.rating_count, rating.rating_sum


def visible_reviews(book) -> int:
    return Review.objects.filter(book=book).count()
