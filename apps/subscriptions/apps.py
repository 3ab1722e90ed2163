from django.apps import AppConfig


class SubscriptionsConfig(AppConfig):
    name = "apps.subscriptions"
    label = "subscriptions"
    verbose_name = "Subscriptions"

    def ready(self):
        from apps.accounts.deletion import account_deletion_blocker_register, users_deleting
        from apps.accounts.export import account_export_register
        from apps.subscriptions import (
            checks,  # noqa: F401  (registers the system checks)
            personal_data,
        )

        # A reader's own deletion waits for a running subscription to end; their Stripe records go with them.
        account_deletion_blocker_register(personal_data.subscription_blocks_deletion)
        account_export_register("billing", personal_data.subscriptions_export)
        users_deleting.connect(_users_deleting, dispatch_uid="subscriptions.users_deleting")


def _users_deleting(sender, *, users, **kwargs):
    from apps.subscriptions.personal_data import stripe_records_delete

    stripe_records_delete(users=users)
