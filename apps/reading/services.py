"""Writes of reading state. Each refuses capsules the reader may not read."""
import math

from django.db import transaction
from django.utils import timezone

from apps.catalog.models import Capsule
from apps.reading.models import ReadingProgress
from apps.reading.policy import can_read


class ReadingError(Exception):
    pass


class NotReadable(ReadingError):
    """The reader may not read this capsule: no progress is recorded for it."""


def _readable_or_raise(user, capsule: Capsule) -> None:
    if not user.is_authenticated:
        raise NotReadable("Sign in to save your place.")
    if not can_read(user, capsule):
        raise NotReadable("This capsule is for subscribers.")


@transaction.atomic
def progress_record(*, user, capsule: Capsule, position: float, heading: str = "") -> ReadingProgress:
    """Save where the reader is; the furthest point reached never goes back."""
    _readable_or_raise(user, capsule)
    if not isinstance(position, (int, float)) or math.isnan(position):
        raise ReadingError("position must be a number between 0 and 1")
    position = min(max(float(position), 0.0), 1.0)
    progress, _ = ReadingProgress.objects.select_for_update().get_or_create(user=user, capsule=capsule)
    progress.position = position
    progress.furthest_position = max(progress.furthest_position, position)
    progress.heading = heading[:200]
    progress.save()
    return progress


@transaction.atomic
def progress_set_complete(*, user, capsule: Capsule, complete: bool) -> ReadingProgress:
    _readable_or_raise(user, capsule)
    progress, _ = ReadingProgress.objects.select_for_update().get_or_create(user=user, capsule=capsule)
    if complete and not progress.completed_at:
        progress.completed_at = timezone.now()
        progress.furthest_position = 1.0
    elif not complete:
        progress.completed_at = None
    progress.save()
    return progress
