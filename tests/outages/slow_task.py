"""A task for the broker-drop test (tests/outages/test_broker_drop.py), loaded into its worker with --include: it
sleeps, so that the broker can be stopped while the worker holds it unacknowledged, then leaves a mark."""

import time
from pathlib import Path

from celery import shared_task


@shared_task(name="tests.outages.slow_task.sleep_then_mark", acks_late=True)
def sleep_then_mark(folder: str, name: str, seconds: float) -> None:
    time.sleep(seconds)
    with (Path(folder) / "marks").open("a") as marks:
        marks.write(name + "\n")
