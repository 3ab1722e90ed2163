"""Admin: customers, subscriptions and events are read-only (Stripe is their source of truth),
with links to the Stripe dashboard; complimentary access is granted and revoked here."""

import json

import stripe
from django.contrib import admin, messages
from django.utils import timezone
from django.utils.html import format_html

from apps.subscriptions import services, stripe_api
from apps.subscriptions.errors import BillingError
from apps.subscriptions.models import ComplimentaryAccess, Customer, StripeEvent, Subscription, TrialFingerprint


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _dashboard_link(kind, stripe_id, livemode=None):
    return format_html(
        '<a href="{}" target="_blank" rel="noopener">{} ↗</a>',
        stripe_api.dashboard_url(kind, stripe_id, livemode=livemode),
        stripe_id,
    )


class SubscriptionInline(admin.TabularInline):
    model = Subscription
    fields = ("stripe_id", "status", "price_id", "current_period_end", "cancel_at_period_end")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Customer)
class CustomerAdmin(ReadOnlyAdmin):
    list_display = ("stripe_id", "user", "created_at", "stripe_link")
    search_fields = ("stripe_id", "user__email", "email")
    list_select_related = ("user",)
    fields = ("user", "stripe_id", "stripe_link", "email", "livemode", "created_at", "updated_at")
    readonly_fields = fields
    inlines = [SubscriptionInline]
    actions = ["resync"]

    @admin.display(description="Stripe dashboard")
    def stripe_link(self, obj):
        return _dashboard_link("customers", obj.stripe_id, obj.livemode)

    @admin.action(description="Re-sync selected customers from Stripe")
    def resync(self, request, queryset):
        count = 0
        for customer in queryset:
            try:
                report = services.customer_sync(stripe_customer_id=customer.stripe_id)
                count += len(report.synced)
                for stripe_id, error in report.failed:
                    self.message_user(request, f"{stripe_id}: {error}", messages.ERROR)
            except (stripe.StripeError, BillingError) as exc:
                self.message_user(request, f"{customer.stripe_id}: {stripe_api.redact(str(exc))}", messages.ERROR)
        self.message_user(request, f"{count} subscription(s) re-read from Stripe.")


@admin.register(Subscription)
class SubscriptionAdmin(ReadOnlyAdmin):
    list_display = (
        "stripe_id",
        "user_email",
        "status",
        "price_id",
        "current_period_end",
        "cancel_at_period_end",
        "past_due_since",
        "synced_at",
    )
    list_filter = ("status", "cancel_at_period_end", "livemode")
    search_fields = ("stripe_id", "customer__stripe_id", "customer__user__email")
    list_select_related = ("customer__user",)
    readonly_fields = [f.name for f in Subscription._meta.fields] + ["stripe_link", "gives_access"]
    actions = ["resync"]

    @admin.display(description="reader", ordering="customer__user__email")
    def user_email(self, obj):
        return obj.customer.user.email

    @admin.display(description="Stripe dashboard")
    def stripe_link(self, obj):
        return _dashboard_link("subscriptions", obj.stripe_id, obj.livemode)

    @admin.display(description="gives access now", boolean=True)
    def gives_access(self, obj):
        return services.subscription_gives_access(obj, now=timezone.now())

    @admin.action(description="Re-sync selected subscriptions from Stripe")
    def resync(self, request, queryset):
        for subscription in queryset:
            try:
                services.subscription_sync(stripe_subscription_id=subscription.stripe_id)
            except (stripe.StripeError, BillingError) as exc:
                self.message_user(request, f"{subscription.stripe_id}: {stripe_api.redact(str(exc))}", messages.ERROR)
        self.message_user(request, "Re-read from Stripe.")


class ProcessedFilter(admin.SimpleListFilter):
    title = "processed"
    parameter_name = "processed"

    def lookups(self, request, model_admin):
        return (("yes", "Processed"), ("no", "Unprocessed"), ("dead", "Dead letters (given up; replay them)"))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(processed_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(processed_at__isnull=True)
        if self.value() == "dead":
            return queryset.filter(processed_at__isnull=True, dead_lettered_at__isnull=False)
        return queryset


@admin.register(StripeEvent)
class StripeEventAdmin(ReadOnlyAdmin):
    list_display = (
        "stripe_id",
        "type",
        "object_id",
        "stripe_created",
        "received_at",
        "processed_at",
        "attempts",
        "has_error",
        "dead_lettered_at",
    )
    list_filter = (ProcessedFilter, "type", "livemode")
    search_fields = ("stripe_id", "object_id", "type")
    date_hierarchy = "received_at"
    fields = (
        "stripe_id", "stripe_link", "type", "object_id", "livemode", "api_version", "stripe_created",
        "received_at", "processed_at", "attempts", "last_error", "dead_lettered_at", "operators_notified_at",
        "payload_pretty",
    )  # fmt: skip
    readonly_fields = fields
    actions = ["reprocess"]

    @admin.display(description="error", boolean=True)
    def has_error(self, obj):
        return bool(obj.last_error) if obj.processed_at is None else False

    @admin.display(description="Stripe dashboard")
    def stripe_link(self, obj):
        return _dashboard_link("events", obj.stripe_id, obj.livemode)

    @admin.display(description="payload")
    def payload_pretty(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.payload, indent=2, sort_keys=True))

    @admin.action(description="Process selected unprocessed events now (dead letters too: replayed)")
    def reprocess(self, request, queryset):
        done = failed = 0
        for event in queryset.filter(processed_at__isnull=True):
            try:
                services.event_replay(event_id=event.pk)
                done += 1
            except Exception:  # noqa: BLE001 - recorded on the event, shown in the list
                failed += 1
        self.message_user(
            request,
            f"{done} processed, {failed} failed (see their error).",
            messages.WARNING if failed else messages.SUCCESS,
        )


class CurrentFilter(admin.SimpleListFilter):
    title = "current"
    parameter_name = "current"

    def lookups(self, request, model_admin):
        return (("yes", "Current"), ("no", "Ended or revoked"))

    def queryset(self, request, queryset):
        current = ComplimentaryAccess.objects.current().values("pk")
        if self.value() == "yes":
            return queryset.filter(pk__in=current)
        if self.value() == "no":
            return queryset.exclude(pk__in=current)
        return queryset


@admin.register(ComplimentaryAccess)
class ComplimentaryAccessAdmin(admin.ModelAdmin):
    list_display = (
        "user",
        "reason",
        "starts_at",
        "ends_at",
        "granted_by",
        "granted_at",
        "revoked_at",
        "is_current_display",
    )
    list_filter = (CurrentFilter,)
    search_fields = ("user__email", "reason")
    autocomplete_fields = ("user",)
    list_select_related = ("user", "granted_by")
    readonly_fields = ("granted_by", "granted_at", "revoked_at", "revoked_by")
    fields = ("user", "reason", "starts_at", "ends_at", "granted_by", "granted_at", "revoked_at", "revoked_by")
    actions = ["revoke"]

    @admin.display(description="current", boolean=True)
    def is_current_display(self, obj):
        return obj.is_current()

    def get_readonly_fields(self, request, obj=None):
        if obj is not None:  # a grant's reader is fixed; change its end or revoke it
            return (*self.readonly_fields, "user")
        return self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            services.complimentary_access_change(access=obj)
            return
        created = services.complimentary_access_grant(
            user=obj.user,
            reason=obj.reason,
            ends_at=obj.ends_at,
            starts_at=obj.starts_at or timezone.now(),
            granted_by=request.user,
        )
        obj.pk, obj.granted_by, obj.granted_at = created.pk, created.granted_by, created.granted_at
        obj._state.adding = False

    # Through the service, so that the reader's stored access goes with the grant (issue 42: it stayed for ever).
    def delete_model(self, request, obj):
        services.complimentary_access_delete(accesses=ComplimentaryAccess.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        services.complimentary_access_delete(accesses=queryset)

    @admin.action(description="Revoke selected complimentary access")
    def revoke(self, request, queryset):
        count = 0
        for access in queryset.filter(revoked_at__isnull=True):
            services.complimentary_access_revoke(access=access, revoked_by=request.user)
            count += 1
        self.message_user(request, f"{count} revoked.")


@admin.register(TrialFingerprint)
class TrialFingerprintAdmin(ReadOnlyAdmin):
    list_display = ("fingerprint", "user", "subscription_stripe_id", "trialed_at")
    search_fields = ("fingerprint", "user__email", "subscription_stripe_id")
    list_select_related = ("user",)
