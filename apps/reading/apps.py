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

        from apps.accounts.deletion import (
            account_content_register,
            account_deletion_closer_register,
            account_deletion_notice_register,
            users_deleting,
        )
        from apps.accounts.export import account_export_register
        from apps.reading.personal_data import reading_export
        from apps.subscriptions import personal_data as billing
        from apps.subscriptions.models import Customer, Subscription

        account_export_register("reading_progress", reading_export)
        # Subscriptions stands on accounts' floor and imports nothing of it (tests/test_layers.py): reading, above
        # both, connects its parts of a reader's own deletion and export. The reader confirms that a running
        # subscription ends at once; their Stripe customer is closed before anything here is deleted (the deletion
        # is refused while Stripe cannot be reached); their Stripe events go with the account. Staff may not delete
        # the mirror's rows one by one (Stripe is their source), but a reader's go with their account, Stripe closed.
        account_content_register(Customer)
        account_content_register(Subscription)
        account_deletion_notice_register(billing.subscription_deletion_notice)
        account_deletion_closer_register(billing.stripe_side_close)
        account_export_register("billing", billing.subscriptions_export)
        users_deleting.connect(_stripe_records_delete, dispatch_uid="reading.subscriptions_users_deleting")


def _stripe_records_delete(sender, *, users, **kwargs):
    from apps.subscriptions.personal_data import stripe_records_delete

    stripe_records_delete(users=users)
