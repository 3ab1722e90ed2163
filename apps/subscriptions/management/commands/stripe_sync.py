import stripe
from django.core.management.base import BaseCommand, CommandError

from apps.subscriptions import services, stripe_api
from apps.subscriptions.errors import BillingError


class Command(BaseCommand):
    help = "Re-reads subscriptions from Stripe and stores their current state (one customer, or all)."

    def add_arguments(self, parser):
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--customer", metavar="cus_...", help="the Stripe customer id to re-sync")
        group.add_argument("--all", action="store_true", help="every subscription at Stripe")

    def handle(self, *args, customer=None, all=False, **options):
        if customer and not customer.startswith("cus_"):
            raise CommandError(f"{customer!r} is not a Stripe customer id (cus_...).")
        try:
            report = services.subscriptions_sync_all() if all else services.customer_sync(stripe_customer_id=customer)
        except (stripe.StripeError, BillingError) as exc:
            raise CommandError(stripe_api.redact(f"{type(exc).__name__}: {exc}")) from exc
        for subscription in report.synced:
            self.stdout.write(f"{subscription.stripe_id}  {subscription.customer.stripe_id}  {subscription.status}")
        for stripe_id in report.skipped:
            self.stdout.write(f"{stripe_id}  skipped: its customer is no reader of this site")
        for stripe_id, error in report.failed:
            self.stderr.write(f"{stripe_id}  failed: {error}")
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(report.synced)} subscription(s) synced from Stripe, {len(report.skipped)} skipped."
            )
        )
        if report.failed:
            raise CommandError(f"{len(report.failed)} subscription(s) could not be synced.")
