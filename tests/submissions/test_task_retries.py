"""Transient database errors in the judge pipeline's tasks (issue 20): "database is locked" or a lost
connection is retried with backoff, a bounded number of times, instead of leaving the submission stuck."""

from unittest import mock

import pytest
from django.db import InterfaceError, OperationalError

from apps.submissions import tasks

PIPELINE_TASKS = [
    (tasks.submission_compile_task, "submission_compile", [1]),
    (tasks.submission_judge_task, "submission_judge", [1]),
    (tasks.submission_sweep_task, "submission_sweep", []),
]


@pytest.mark.parametrize(("task", "service", "args"), PIPELINE_TASKS, ids=lambda v: getattr(v, "name", None))
@pytest.mark.parametrize("error", [OperationalError("database is locked"), InterfaceError("connection already closed")])
def test_a_task_that_hits_a_transient_database_error_once_is_retried_and_succeeds(task, service, args, error):
    with (
        mock.patch.object(tasks.services, service, side_effect=[error, None]) as called,
        mock.patch.object(tasks.worker, "judge"),
    ):
        result = task.apply(args=args)  # eager: the retry runs at once, in this thread

    assert result.successful(), result.traceback
    assert called.call_count == 2


def test_retries_are_bounded():
    with mock.patch.object(
        tasks.services, "submission_compile", side_effect=OperationalError("database is locked")
    ) as called:
        result = tasks.submission_compile_task.apply(args=[1])

    assert result.failed() and isinstance(result.result, OperationalError)
    assert called.call_count == tasks.submission_compile_task.max_retries + 1
