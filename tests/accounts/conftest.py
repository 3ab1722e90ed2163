# A reader's deletion closes their Stripe customer first: these tests point the site at localstripe (a real Stripe
# stand-in), where the factories' customers are unknown, as customers already deleted at Stripe are.
from tests.subscriptions.conftest import localstripe, stripe_local  # noqa: F401
