from django.core.management.base import BaseCommand

from apps.subscriptions import services


class Command(BaseCommand):
    help = (
        "Recomputes every reader's stored access window from their subscriptions and complimentary access. "
        "Run it after changing SUBSCRIPTION_PAST_DUE_GRACE_DAYS or SUBSCRIPTION_RENEWAL_MARGIN_HOURS."
    )

    def handle(self, *args, **options):
        count = services.entitlements_refresh_all()
        self.stdout.write(self.style.SUCCESS(f"{count} readers' access recomputed."))
