"""Issue 28: the queue position a reader is shown is the place in the order GPU workers claim (fair between
readers), computed by the same function; and the 1.5 s poll of a waiting submission answers 204 from a cheap
fingerprint, without building the panel."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.submissions import selectors
from apps.submissions.models import Submission
from apps.submissions.panels import live_state, live_submissions
from apps.submissions.services.pipeline import _fairest_compiled
from tests.factories import UserFactory
from tests.submissions.test_views import client_for, locked_exercise, make_submission, subscriber  # noqa: F401

pytestmark = pytest.mark.django_db
Status = Submission.Status


def compiled(user, exercise, minutes_ago: int) -> Submission:
    submission = make_submission(user, exercise)
    at = timezone.now() - timedelta(minutes=minutes_ago)
    Submission.objects.filter(pk=submission.pk).update(status=Status.COMPILED, created_at=at, compiled_at=at)
    submission.refresh_from_db()
    return submission


def test_the_position_shown_is_the_order_in_which_gpus_claim(locked_exercise, subscriber, settings):  # noqa: F811
    settings.SUBMISSIONS_PER_HOUR = settings.SUBMISSIONS_PER_DAY = 100
    other = UserFactory(is_staff=True)  # staff may read the locked capsule
    # The subscriber was served a minute ago; three more of theirs wait, compiled before the other reader's one.
    served = make_submission(subscriber, locked_exercise)
    Submission.objects.filter(pk=served.pk).update(status=Status.PASSED, started_at=timezone.now())
    burst = [compiled(subscriber, locked_exercise, minutes_ago=m) for m in (30, 20, 10)]
    single = compiled(other, locked_exercise, minutes_ago=5)

    # First in, first out would say 4 for the single one; the workers take it next (never served: first).
    assert selectors.queue_position(single) == 1
    assert [selectors.queue_position(s) for s in burst] == [2, 3, 4]

    # Claim them one by one as the workers do: each time, the one claimed is the one shown "position 1".
    waiting = [single, *burst]
    while waiting:
        positions = {s.pk: selectors.queue_position(s) for s in waiting}
        claimed = _fairest_compiled(single.gpu_kind, set())
        assert positions[claimed] == 1
        Submission.objects.filter(pk=claimed).update(status=Status.RUNNING, started_at=timezone.now())
        waiting = [s for s in waiting if s.pk != claimed]
        for s in waiting:
            s.refresh_from_db()


def test_the_poll_answers_204_from_the_fingerprint_without_building_the_panel(
    locked_exercise,  # noqa: F811
    subscriber,  # noqa: F811
    monkeypatch,
):
    client = client_for(subscriber)
    make_submission(subscriber, locked_exercise)
    url = "/capsules/locked-two/submissions/"
    first = client.get(url, HTTP_HX_REQUEST="true")
    state = re.search(r'name="state" value="([0-9a-f]{16})"', first.content.decode()).group(1)
    assert state == live_state(subscriber, locked_exercise) == live_submissions(subscriber, locked_exercise).state

    def not_built(*args, **kwargs):
        raise AssertionError("the panel was built for an unchanged poll")

    monkeypatch.setattr("apps.submissions.views.live_submissions", not_built)
    with CaptureQueriesContext(connection) as queries:
        unchanged = client.get(url, {"state": state}, HTTP_HX_REQUEST="true")
    assert unchanged.status_code == 204
    # Session and reader, capsule, exercise, access, then the fingerprint: the reader's states, the queue
    # position and the workers online (7 here). Building the panel took twelve more.
    assert len(queries) <= 7, [q["sql"][:80] for q in queries]
