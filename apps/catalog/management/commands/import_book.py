from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.catalog.content_files import ImportFileError
from apps.catalog.services import book_import


class Command(BaseCommand):
    help = "Create or update the book from a content folder (content/README.md). Idempotent; all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path, help="e.g. content/kernel-engineering")

    def handle(self, *args, folder: Path, **options):
        try:
            report = book_import(folder=folder)
        except ImportFileError as error:
            raise CommandError(f"{error}\nNothing was changed.") from error
        for label, items in (
            ("created", report.created),
            ("updated", report.updated),
            ("unpublished", report.unpublished),
        ):
            for item in items:
                self.stdout.write(f"  {label:<11} {item}")
        for label, changes in report.related.items():  # e.g. "exercise", ["created 32 sgemm"]
            for change in changes:
                self.stdout.write(f"  {label:<11} {change}")
        if report.ignored:
            # Not an error, so that books written before reading times were computed still import.
            self.stdout.write(
                self.style.WARNING(
                    f"  ignored     {len(report.ignored)} retired front-matter key(s), e.g. {report.ignored[0]}: "
                    "reading time is computed from the text (content/README.md); remove them"
                )
            )
        related = "".join(f"; {len(changes)} {label} change(s)" for label, changes in report.related.items())
        self.stdout.write(
            self.style.SUCCESS(
                f"Book {report.book}: {len(report.created)} created, {len(report.updated)} updated, "
                f"{len(report.unpublished)} unpublished, {len(report.unchanged)} unchanged{related}."
            )
        )
