"""A kernel submitted while the broker is down (issue 20): the reader gets the usual answer, the
submission stays queued, and the next sweep sends it again without counting that as an attempt."""

import logging
from unittest import mock

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.submissions import services
from apps.submissions.models import Submission
from apps.submissions.tasks import submission_compile_task
from tests.outages import broker_down
from tests.submissions.conftest import NAIVE

pytestmark = pytest.mark.django_db


def test_a_kernel_submitted_with_the_broker_down_stays_queued_and_the_next_sweep_sends_it(
    exercise, reader, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    client = Client()
    client.force_login(reader)

    with broker_down(monkeypatch), caplog.at_level(logging.WARNING, logger="apps.submissions"):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(reverse("submissions:submit", args=[exercise.capsule.slug]), {"source": NAIVE})
        submission = Submission.objects.get()
        assert response.status_code == 302
        assert submission.status == Submission.Status.QUEUED and submission.deadline_at <= timezone.now()
        assert any("broker refused" in r.getMessage() for r in caplog.records)

        # A sweep while the broker is still down tries again and does not use up an attempt.
        with django_capture_on_commit_callbacks(execute=True):
            assert services.submission_sweep().requeued == [submission.pk]
        submission.refresh_from_db()
        assert submission.sweeps == 0 and submission.deadline_at <= timezone.now()

    with mock.patch.object(submission_compile_task, "delay") as delay, django_capture_on_commit_callbacks(execute=True):
        assert services.submission_sweep().requeued == [submission.pk]

    delay.assert_called_once_with(submission.pk)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.QUEUED and submission.deadline_at > timezone.now()
