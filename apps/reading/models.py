from django.conf import settings
from django.db import models

from apps.catalog.models import Book, Capsule


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
            models.CheckConstraint(
                condition=models.Q(position__gte=0, position__lte=1), name="progress_position_is_a_fraction"
            ),
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


class EpubBuild(models.Model):
    """One EPUB file of the book, built for one state of its content.

    A build is keyed by the fingerprint of what goes into it (apps.reading.selectors.epub_fingerprint):
    when the content changes, the fingerprint changes and the next download asks for a new build.
    The file lives under settings.EPUB_ROOT, outside every public folder, and is served only
    through the download view, which asks the access policy first.
    """

    class Edition(models.TextChoices):
        FULL = "full", "Full book"
        SAMPLE = "sample", "Free sample"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        BUILDING = "building", "Building"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"
        SUPERSEDED = "superseded", "Superseded"  # the content moved on; its file is deleted

    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="epub_builds")
    edition = models.CharField(max_length=10, choices=Edition.choices)
    fingerprint = models.CharField(max_length=64)
    book_revision = models.PositiveIntegerField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    file_name = models.CharField(max_length=200, blank=True, help_text="Relative to settings.EPUB_ROOT")
    size_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    built_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # One build per edition and content state: concurrent downloads share it.
            models.UniqueConstraint(fields=["book", "edition", "fingerprint"], name="one_epub_build_per_content_state"),
            models.CheckConstraint(
                condition=~models.Q(status="ready") | ~models.Q(file_name=""), name="ready_epub_build_has_a_file"
            ),
        ]
        indexes = [models.Index(fields=["book", "edition", "status"])]

    def __str__(self):
        return f"{self.book} · {self.edition} · r{self.book_revision} · {self.status}"

    @property
    def path(self):
        return settings.EPUB_ROOT / self.file_name if self.file_name else None

    @property
    def is_ready(self) -> bool:
        return self.status == self.Status.READY and self.path is not None and self.path.is_file()

    @property
    def is_pending(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.BUILDING)
