"""A mirror of the Stripe objects that decide access, and complimentary access granted by admins.

Stripe is the source of truth for customers and subscriptions: these rows are written only by
`services.subscription_sync` from what the Stripe API answers (never from a redirect, never
from a webhook payload alone). Each reader's access window is computed from the stored rows when they change
(`services.entitlement`, the only writer) and stored on the reader.
"""

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Customer(models.Model):
    """A reader's Stripe customer: one per reader, reused for every Checkout Session."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="stripe_customer")
    stripe_id = models.CharField("Stripe customer id", max_length=255, unique=True)
    email = models.EmailField("email at creation", blank=True)
    livemode = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.stripe_id} ({self.user})"


class SubscriptionQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(customer__user_id=user.pk)

    def still_open(self, *, now=None):
        """Subscriptions Stripe still bills or may recover (a reader with one must not start a
        second: the portal fixes the card or the plan instead)."""
        now = now or timezone.now()
        ended = [Subscription.Status.CANCELED, Subscription.Status.INCOMPLETE, Subscription.Status.INCOMPLETE_EXPIRED]
        scheduled_end_passed = Q(cancel_at_period_end=True, current_period_end__lte=now) | Q(cancel_at__lte=now)
        return self.exclude(status__in=ended).exclude(scheduled_end_passed)


class Subscription(models.Model):
    """The current state of one Stripe subscription, as last read from the Stripe API."""

    class Status(models.TextChoices):
        INCOMPLETE = "incomplete", "Incomplete"
        INCOMPLETE_EXPIRED = "incomplete_expired", "Incomplete (expired)"
        TRIALING = "trialing", "Trialing"
        ACTIVE = "active", "Active"
        PAST_DUE = "past_due", "Past due"
        CANCELED = "canceled", "Canceled"
        UNPAID = "unpaid", "Unpaid"
        PAUSED = "paused", "Paused"

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="subscriptions")
    stripe_id = models.CharField("Stripe subscription id", max_length=255, unique=True)
    status = models.CharField(max_length=32, choices=Status.choices)
    price_id = models.CharField("Stripe price id", max_length=255, blank=True)
    interval = models.CharField("billing interval", max_length=16, blank=True, help_text="day, week, month or year")
    interval_count = models.PositiveIntegerField(default=1)
    unit_amount = models.PositiveIntegerField(null=True, blank=True, help_text="In the currency's smallest unit.")
    currency = models.CharField(max_length=3, blank=True)
    current_period_start = models.DateTimeField(null=True, blank=True)
    current_period_end = models.DateTimeField(null=True, blank=True)
    cancel_at_period_end = models.BooleanField(default=False)
    cancel_at = models.DateTimeField(null=True, blank=True)
    canceled_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    trial_end = models.DateTimeField(null=True, blank=True)
    payment_method_id = models.CharField(
        "Stripe payment method id", max_length=255, blank=True, help_text="Its card's fingerprint allows one trial."
    )
    past_due_since = models.DateTimeField(
        null=True, blank=True, help_text="When it became past due (the grace period counts from here); empty otherwise."
    )
    livemode = models.BooleanField(default=False)
    stripe_created = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField(default=timezone.now, help_text="When this row was last read from Stripe.")

    objects = SubscriptionQuerySet.as_manager()

    class Meta:
        ordering = ["-stripe_created", "-pk"]
        indexes = [models.Index(fields=["customer", "status"])]

    def __str__(self):
        return f"{self.stripe_id} ({self.get_status_display()})"

    @property
    def user(self):
        return self.customer.user

    @property
    def ends_at(self):
        """When access ends if nothing changes: the scheduled cancellation, else None."""
        if self.cancel_at_period_end:
            return self.current_period_end
        return self.cancel_at

    @property
    def grace_ends_at(self):
        if self.status != self.Status.PAST_DUE or self.past_due_since is None:
            return None
        return self.past_due_since + timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS)


class StripeEvent(models.Model):
    """Every verified webhook event, stored once (the unique id makes a redelivery a no-op).
    An event stays unprocessed, with its error, until processing succeeds, or is dead-lettered after
    STRIPE_EVENT_MAX_ATTEMPTS failures."""

    stripe_id = models.CharField("Stripe event id", max_length=255, unique=True)
    type = models.CharField(max_length=255, db_index=True)
    livemode = models.BooleanField(default=False)
    api_version = models.CharField(max_length=64, blank=True)
    stripe_created = models.DateTimeField(help_text="When Stripe created the event.")
    object_id = models.CharField("object id", max_length=255, blank=True, help_text="The id of data.object.")
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    # Set once processing failed STRIPE_EVENT_MAX_ATTEMPTS times: no task or sweep tries it again until an admin
    # replays it (admin: Stripe events, "Dead letters").
    dead_lettered_at = models.DateTimeField(null=True, blank=True)
    operators_notified_at = models.DateTimeField(
        null=True, blank=True, help_text="When the operators were mailed about this dead letter."
    )

    class Meta:
        ordering = ["-received_at"]
        indexes = [
            models.Index(
                fields=["received_at"], condition=Q(processed_at__isnull=True), name="subs_event_unprocessed_idx"
            )
        ]

    def __str__(self):
        return f"{self.stripe_id} {self.type}"

    @property
    def is_processed(self) -> bool:
        return self.processed_at is not None


class ComplimentaryAccessQuerySet(models.QuerySet):
    def current(self, *, now=None):
        now = now or timezone.now()
        return self.filter(revoked_at__isnull=True, starts_at__lte=now).filter(
            Q(ends_at__isnull=True) | Q(ends_at__gt=now)
        )


class ComplimentaryAccess(models.Model):
    """Full access granted by an admin (reviewers, authors, support gestures, the demo), with a
    reason, an optional end and a revocation; it needs no Stripe account."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="complimentary_accesses")
    reason = models.CharField(max_length=200)
    starts_at = models.DateTimeField(default=timezone.now)
    ends_at = models.DateTimeField(null=True, blank=True, help_text="Leave empty for access with no end date.")
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="complimentary_accesses_granted",
    )
    granted_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="complimentary_accesses_revoked",
    )

    objects = ComplimentaryAccessQuerySet.as_manager()

    class Meta:
        verbose_name = "complimentary access"
        verbose_name_plural = "complimentary access"
        ordering = ["-granted_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(ends_at__isnull=True) | Q(ends_at__gt=models.F("starts_at")),
                name="subs_comp_ends_after_start",
            ),
        ]

    def __str__(self):
        return f"{self.user}: {self.reason}"

    def is_current(self, *, now=None) -> bool:
        now = now or timezone.now()
        return self.revoked_at is None and self.starts_at <= now and (self.ends_at is None or self.ends_at > now)


class TrialFingerprint(models.Model):
    """A card that has had a free trial (Stripe's `card.fingerprint`, the same for the same card number on every
    customer): a second reader who starts a trial with it has the trial ended at once (services.trials)."""

    fingerprint = models.CharField(max_length=64, unique=True)
    # SET_NULL: a deleted account's card has still had its trial.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    subscription_stripe_id = models.CharField("first trial's subscription", max_length=255)
    trialed_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"card {self.fingerprint[:6]}… trialed {self.trialed_at:%Y-%m-%d}"
