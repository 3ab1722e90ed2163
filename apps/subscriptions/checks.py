"""System checks of the Stripe configuration (run by `manage.py check`, runserver, migrate and gunicorn's
start-up through Django): test mode must never meet production settings."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


@checks.register(checks.Tags.security, deploy=False)
def stripe_test_mode_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    if not getattr(settings, "STRIPE_TEST_MODE", False):
        return []
    errors = []
    if not getattr(settings, "STRIPE_TEST_MODE_ALLOWED", False):
        errors.append(
            checks.Error(
                "STRIPE_TEST_MODE is on under settings that do not allow it (production).",
                hint="Test mode grants subscriptions for a fake card: unset STRIPE_TEST_MODE and configure Stripe.",
                id="subscriptions.E001",
            )
        )
    if urlsplit(settings.STRIPE_API_BASE).hostname not in LOOPBACK_HOSTS:
        errors.append(
            checks.Error(
                f"STRIPE_TEST_MODE talks to {settings.STRIPE_API_BASE!r}, which is not a stand-in on this machine.",
                hint="Point STRIPE_API_BASE at `manage.py stripe_test_server` (http://127.0.0.1:PORT).",
                id="subscriptions.E002",
            )
        )
    return errors
