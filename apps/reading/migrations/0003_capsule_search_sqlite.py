"""SQLite only: the FTS5 indexes of capsules and the triggers that keep them in step (apps/reading/fts_sqlite.py).

On PostgreSQL this migration does nothing: search uses PostgreSQL's own full-text functions there."""

from django.db import migrations

from apps.reading.fts_sqlite import fts_install, fts_uninstall


def install(apps, schema_editor):
    fts_install(schema_editor.connection)


def uninstall(apps, schema_editor):
    fts_uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0001_initial"),
        ("reading", "0002_epub_build"),
    ]

    operations = [migrations.RunPython(install, uninstall)]
