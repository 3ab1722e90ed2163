"""PostgreSQL only: the capsules' stored search vectors (generated columns) and their GIN indexes
(apps/reading/fts_postgres.py).

On SQLite this migration does nothing: search uses the FTS5 tables of migration 0003 there."""

from django.db import migrations

from apps.reading.fts_postgres import fts_install, fts_uninstall


def install(apps, schema_editor):
    fts_install(schema_editor.connection)


def uninstall(apps, schema_editor):
    fts_uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0001_initial"),
        ("reading", "0003_capsule_search_sqlite"),
    ]

    operations = [migrations.RunPython(install, uninstall)]
