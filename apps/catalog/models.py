"""The book as data: a Book has Parts, a Part has Capsules, a Capsule has Figures.

A capsule keeps its Markdown source and the HTML rendered from it for its current revision
(`body_html`), so pages never render Markdown on the request path. Whether a visitor may see
that HTML is decided in one place only, above this app: `apps.reading.policy` (which also
holds the query of readable capsules).
"""

from django.db import models
from django.urls import reverse


class Book(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    subtitle = models.CharField(max_length=300, blank=True)
    blurb = models.TextField(blank=True)
    publisher = models.CharField(max_length=200, blank=True)
    level = models.CharField(max_length=50, blank=True)
    author = models.CharField(max_length=200)
    language = models.CharField(max_length=20, default="en")
    ereader_pitch = models.TextField(blank=True)
    paywall_pitch = models.TextField(blank=True)
    # The measured figures the capsules cite as {{m:KEY}}, from the book folder's measurements.yaml:
    # {key: {value, unit, gpu, date, command, source}} (apps.catalog.measurements). Kept here so that an edit in
    # admin renders its references as the import does.
    measurements = models.JSONField(default=dict, blank=True)
    # Goes up whenever the book or any capsule changes: derived artefacts (EPUB) key on it.
    revision = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return self.title

    def get_absolute_url(self):
        return reverse("pages:landing")


class Part(models.Model):
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="parts")
    number = models.PositiveSmallIntegerField()
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["book", "number"]
        constraints = [
            models.UniqueConstraint(fields=["book", "number"], name="part_number_unique_in_book"),
            models.UniqueConstraint(fields=["book", "slug"], name="part_slug_unique_in_book"),
        ]

    def __str__(self):
        return f"{self.number:02d} {self.title}"


class CapsuleQuerySet(models.QuerySet):
    def published(self):
        return self.filter(status=Capsule.Status.PUBLISHED)

    def in_reading_order(self):
        return self.order_by("number")


class Capsule(models.Model):
    class Access(models.TextChoices):
        FREE = "free", "Free"
        LOCKED = "locked", "Subscribers"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        PUBLISHED = "published", "Published"

    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="capsules")
    part = models.ForeignKey(Part, on_delete=models.PROTECT, related_name="capsules")
    number = models.PositiveSmallIntegerField()
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    badge = models.CharField(max_length=30, blank=True)
    # Reading time, from the rendered prose's words at READING_WORDS_PER_MINUTE (apps.catalog.reading_time).
    minutes = models.PositiveSmallIntegerField(default=1, editable=False)
    access = models.CharField(max_length=10, choices=Access.choices, default=Access.LOCKED)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PUBLISHED)
    # Published but unfinished (front matter `draft: true`): readers see it, marked "draft" wherever it is listed.
    is_draft = models.BooleanField(
        "draft", default=False, help_text="Published, but marked as a draft on its page, in the contents and the EPUB."
    )
    summary = models.TextField(help_text="Plain text. Public: shown on locked capsules too.")
    outline = models.JSONField(default=list, blank=True, help_text="Section titles. Public.")
    body = models.TextField(blank=True, help_text="Markdown (see content/README.md).")

    # Rendered from `body` for `revision` by apps.catalog.services; never edited by hand.
    body_html = models.TextField(blank=True, editable=False)
    body_text = models.TextField(blank=True, editable=False)
    toc = models.JSONField(default=list, blank=True, editable=False)
    words = models.PositiveIntegerField(
        default=0, editable=False, help_text="Words of the rendered prose, code listings left out."
    )
    content_hash = models.CharField(max_length=64, blank=True, editable=False)
    revision = models.PositiveIntegerField(default=1, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CapsuleQuerySet.as_manager()

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(fields=["book", "number"], name="capsule_number_unique_in_book"),
        ]

    def __str__(self):
        return f"{self.number:02d} {self.title}"

    def get_absolute_url(self):
        return reverse("reading:capsule", kwargs={"slug": self.slug})

    @property
    def is_free(self):
        return self.access == self.Access.FREE


class Figure(models.Model):
    """An SVG drawing of a capsule, served only to readers who may read the capsule."""

    capsule = models.ForeignKey(Capsule, on_delete=models.CASCADE, related_name="figures")
    name = models.CharField(max_length=100, help_text="File name, e.g. 32-naive-access.svg")
    number = models.PositiveSmallIntegerField(help_text="Figure number within the capsule")
    caption = models.TextField()
    svg = models.TextField()

    class Meta:
        ordering = ["capsule", "number"]
        constraints = [
            models.UniqueConstraint(fields=["capsule", "name"], name="figure_name_unique_in_capsule"),
        ]

    def __str__(self):
        return f"{self.capsule.number:02d} figure {self.number}: {self.name}"

    def get_absolute_url(self):
        return reverse("reading:figure", kwargs={"slug": self.capsule.slug, "name": self.name})
