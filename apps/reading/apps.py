from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ReadingConfig(AppConfig):
    name = "apps.reading"
    label = "reading"
    verbose_name = "Reading"

    def ready(self):
        from apps.reading.fts_sqlite import fts_repair_after_migrate

        # Once per migrate (sent for this app only): SQLite's search index survives table rebuilds.
        post_migrate.connect(fts_repair_after_migrate, sender=self, dispatch_uid="reading-fts-repair")

        from apps.accounts.export import account_export_register
        from apps.reading.personal_data import reading_export

        account_export_register("reading_progress", reading_export)
