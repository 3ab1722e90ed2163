"""Domain errors of the subscriptions app."""


class BillingError(Exception):
    """Base class: a billing action that cannot be done as asked."""


class StripeNotConfigured(BillingError):
    """The Stripe settings this action needs are missing."""


class UnknownPlan(BillingError):
    """A plan that the pricing page does not offer (or whose Price is not configured)."""


class AlreadySubscribed(BillingError):
    """The reader already has a subscription giving access: the portal manages it."""


class NoBillingAccount(BillingError):
    """The reader has no Stripe customer yet (nothing for the portal to show)."""


class WebhookRejected(BillingError):
    """A webhook request that is not a verified Stripe event (bad signature, stale, malformed)."""


class StripeDataError(BillingError):
    """Stripe answered something this mirror cannot store (an unknown status, a customer of no reader)."""


class EventProcessingFailed(BillingError):
    """Processing a stored event failed; carries the redacted reason to Celery's retry (and logs)."""


class NotInTestMode(BillingError):
    """A test-mode page or action outside test mode, or for a session that is not this reader's."""


class CardDeclined(BillingError):
    """Test mode: the test card was declined (e.g. 4000 0000 0000 0341); the Checkout Session stays open."""


class BillingNotClosed(BillingError):
    """A reader's Stripe side could not be closed now (Stripe unreachable or refusing): their account stays."""
