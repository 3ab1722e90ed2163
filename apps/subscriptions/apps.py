from django.apps import AppConfig


class SubscriptionsConfig(AppConfig):
    name = "apps.subscriptions"
    label = "subscriptions"
    verbose_name = "Subscriptions"

    def ready(self):
        from django.db.models.signals import post_delete

        from apps.subscriptions import checks  # noqa: F401  (registers the system checks)
        from apps.subscriptions.models import ComplimentaryAccess
        from apps.subscriptions.services.complimentary import complimentary_access_deleted

        # A backstop for deletions that bypass complimentary_access_delete: a deleted grant must not leave its
        # reader's stored access behind (issue 42).
        post_delete.connect(complimentary_access_deleted, sender=ComplimentaryAccess, dispatch_uid="grant-deleted")
