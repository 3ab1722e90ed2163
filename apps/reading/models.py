from django.conf import settings
from django.db import models

from apps.catalog.models import Capsule


class ReadingProgress(models.Model):
    """How far one reader got in one capsule. `position` is the fraction of the text scrolled past."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reading_progress")
    capsule = models.ForeignKey(Capsule, on_delete=models.CASCADE, related_name="reading_progress")
    position = models.FloatField(default=0.0)
    furthest_position = models.FloatField(default=0.0)
    heading = models.CharField(max_length=200, blank=True, help_text="Anchor of the section last in view")
    completed_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    last_read_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "reading progress"
        constraints = [
            models.UniqueConstraint(fields=["user", "capsule"], name="one_progress_per_reader_and_capsule"),
            models.CheckConstraint(condition=models.Q(position__gte=0, position__lte=1), name="progress_position_is_a_fraction"),
        ]
        indexes = [models.Index(fields=["user", "-last_read_at"])]

    def __str__(self):
        return f"{self.user} · {self.capsule} · {self.percent}%"

    @property
    def percent(self) -> int:
        return 100 if self.completed_at else round(self.furthest_position * 100)

    @property
    def is_complete(self) -> bool:
        return self.completed_at is not None
