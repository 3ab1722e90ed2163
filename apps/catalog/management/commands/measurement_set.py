import datetime
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.catalog.measurements import (
    FILE_NAME,
    HEADER,
    MeasurementError,
    leading_comments,
    measurement_check,
    measurements_dump,
    measurements_parse,
)


class Command(BaseCommand):
    help = (
        "Write one measured figure into a book's measurements.yaml (content/README.md, 'Measured figures'): a new "
        "key, or a new value for an existing one. The capsules that cite it change at the next import_book."
    )

    def add_arguments(self, parser):
        parser.add_argument("key", help="e.g. sgemm.k07.pct_cublas")
        parser.add_argument("value", help='the number as measured, e.g. 78.3 (its digits are kept: "15.760")')
        parser.add_argument("--unit", help="e.g. %%, ms, TFLOP/s (an existing entry keeps its unit without it)")
        parser.add_argument("--gpu", help="e.g. 'NVIDIA H200' (required for a new key)")
        parser.add_argument("--command", dest="measured_by", help="the command that measured it (needed for a new key)")
        parser.add_argument("--date", help="YYYY-MM-DD (default: today)")
        parser.add_argument("--source", help="where the run is recorded, e.g. 'kernels/BENCHMARKS.md, The ladder'")
        parser.add_argument("--book", type=Path, default=None, help="the book folder (default: the demo book)")

    def handle(self, *args, key, value, unit, gpu, measured_by, date, source, book, **options):
        path = Path(book or settings.DEMO_BOOK_DIR) / FILE_NAME
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        try:
            entries = measurements_parse(text)
        except MeasurementError as error:
            raise CommandError(f"{path}:{error.line}: {error.message}") from error
        old = entries.get(key)
        fields = {
            "value": value,
            "unit": unit if unit is not None else (old.unit if old else None),
            "gpu": gpu or (old.gpu if old else None),
            "date": date or datetime.date.today().isoformat(),
            "command": measured_by or (old.command if old else None),
            "source": source if source is not None else (old.source if old else ""),
        }
        try:
            entries[key] = measurement_check(key, {name: v for name, v in fields.items() if v is not None})
        except MeasurementError as error:
            raise CommandError(f"{error.message} (a new key needs --unit, --gpu and --command)") from error
        path.write_text(measurements_dump(entries, header=leading_comments(text) or HEADER), encoding="utf-8")
        was = f" (was {old.text()}, {old.date})" if old else " (new)"
        self.stdout.write(self.style.SUCCESS(f"{key} = {entries[key].text()}{was} in {path}"))
