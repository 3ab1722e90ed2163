"""PostgreSQL only: the trigger that lets only the entitlement service change a reader's access columns
(apps/subscriptions/access_guard.py). On SQLite this migration does nothing."""

from django.db import migrations

from apps.subscriptions.access_guard import guard_install, guard_uninstall


def install(apps, schema_editor):
    guard_install(schema_editor.connection)


def uninstall(apps, schema_editor):
    guard_uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0008_access_window_shape"),
        ("subscriptions", "0004_bounded_access_and_one_trial"),
    ]

    operations = [migrations.RunPython(install, uninstall)]
