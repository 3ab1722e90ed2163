"""reading.selectors.reader_state: whether a reader may read everything, and their progress on a capsule, in one
statement for the capsule page; always the same answers as has_full_access and progress_get."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.accounts.models import User
from apps.reading.models import ReadingProgress
from apps.reading.policy import has_full_access
from apps.reading.selectors import progress_get, reader_state
from tests.subscriptions.visitors import VISITOR_KINDS, make_visitor

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", VISITOR_KINDS)
@pytest.mark.parametrize("with_progress", [False, True])
def test_the_same_answers_as_the_policy_and_the_progress_read(mini_book, kind, with_progress):
    capsule = mini_book.capsules.get(slug="locked-two")
    visitor = make_visitor(kind)
    if with_progress and visitor.is_authenticated:
        ReadingProgress.objects.create(user=visitor, capsule=capsule, position=0.3, furthest_position=0.6)
    fresh = (lambda: User.objects.get(pk=visitor.pk)) if visitor.is_authenticated else (lambda: visitor)
    full_access, progress = reader_state(fresh(), capsule)
    expected = progress_get(visitor, capsule)
    assert full_access is has_full_access(fresh()), kind
    assert (progress and (progress.pk, progress.furthest_position)) == (expected and (expected.pk, 0.6)), kind


def test_a_subscribers_capsule_page_makes_two_statements(client, mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    client.force_login(make_visitor("active"))
    url = reverse("reading:capsule", kwargs={"slug": capsule.slug})
    client.get(url)  # the capsule, kept per process for the public version
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    # Tests read the public version on every use (config/settings/test.py); a server, once a second.
    statements = [query["sql"] for query in queries if "AS source_0" not in query["sql"]]
    assert len(statements) == 2, statements  # the session with its reader; access with progress
