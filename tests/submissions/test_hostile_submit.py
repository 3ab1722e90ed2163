"""Hostile input to the submit form (issue 20): a plan nested thousands deep is a plan error that
keeps the reader's text, not a 500, and it counts nothing against the quota."""

from apps.submissions.models import Submission
from apps.submissions.selectors import quota_get
from tests.submissions.test_views import LOCKED_SUBMIT, NAIVE, client_for, locked_exercise, subscriber  # noqa: F401


def test_a_deeply_nested_plan_is_a_plan_error_with_the_text_kept(locked_exercise, subscriber):  # noqa: F811
    plan = "[[launch]]\nkernel = 'sgemm_naive'\ngrid = " + "[" * 10_000 + "]" * 10_000 + "\nblock = [1]\n"
    before = quota_get(subscriber)
    response = client_for(subscriber).post(LOCKED_SUBMIT, {"source": NAIVE, "plan": plan})
    assert response.status_code == 400
    body = response.content.decode()
    assert "The launch plan does not parse" in body and "nest" in body and 'aria-invalid="true"' in body
    assert "[" * 10_000 in body  # the reader's plan comes back as typed
    assert not Submission.objects.exists()
    assert quota_get(subscriber).remaining == before.remaining
