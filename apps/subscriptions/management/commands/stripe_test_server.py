from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from apps.subscriptions.services import HANDLED_EVENT_TYPES
from config.site import site_url

# What test mode offers (fake Prices of the stand-in; amounts in cents).
TEST_MODE_PLANS = (
    ("STRIPE_PRICE_MONTHLY", 1200, "month"),
    ("STRIPE_PRICE_YEARLY", 12000, "year"),
)


class Command(BaseCommand):
    help = (
        "Runs the Stripe stand-in of test mode (localstripe with Prices, Checkout and the Portal) at STRIPE_API_BASE, "
        "delivering signed webhooks to SITE_URL. Refused unless STRIPE_TEST_MODE is on (make run turns it on)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--state-file", help="where to keep the stand-in's data between runs (default: VAR_DIR)")

    def handle(self, *args, state_file=None, **options):
        if not settings.STRIPE_TEST_MODE or not settings.STRIPE_TEST_MODE_ALLOWED:
            raise CommandError("The Stripe stand-in runs only in test mode (STRIPE_TEST_MODE=true, development).")
        try:
            from apps.subscriptions import standin
        except ImportError as exc:  # localstripe is a development dependency
            raise CommandError(f"The Stripe stand-in needs localstripe (pip install -e '.[dev]'): {exc}") from exc
        api = urlsplit(settings.STRIPE_API_BASE)
        config = standin.StandInConfig(
            site_url=site_url(),
            webhook_path=reverse("subscriptions:stripe-webhook"),
            webhook_secret=settings.STRIPE_WEBHOOK_SECRET,
            webhook_events=sorted(HANDLED_EVENT_TYPES),
            plans=[
                {"id": getattr(settings, name), "amount": amount, "currency": "eur", "interval": interval}
                for name, amount, interval in TEST_MODE_PLANS
            ],
            state_file=Path(state_file) if state_file else Path(settings.VAR_DIR) / "stripe-test-mode.pickle",
        )
        self.stdout.write(
            f"Stripe test mode: a local stand-in on {settings.STRIPE_API_BASE}, webhooks to "
            f"{config.site_url}{config.webhook_path}; no real payment is possible."
        )
        standin.serve(config, host=api.hostname or "127.0.0.1", port=api.port or 8420)
