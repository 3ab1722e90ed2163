from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected as admin_delete_selected
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import UserChangeForm as DjangoUserChangeForm
from django.contrib.auth.forms import UserCreationForm as DjangoUserCreationForm
from django.db import transaction
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.utils import timezone

from apps.accounts.deletion import account_content_names, account_deletion_notices
from apps.accounts.models import User
from apps.accounts.services import AccountDeletionRefused, accounts_close


class UserCreationForm(DjangoUserCreationForm):
    class Meta:
        model = User
        fields = ("email",)


class UserChangeForm(DjangoUserChangeForm):
    class Meta:
        model = User
        fields = "__all__"


class AccessFilter(admin.SimpleListFilter):
    title = "full access"
    parameter_name = "access"

    def lookups(self, request, model_admin):
        return (("now", "Now"), ("subscription", "From a subscription"), ("complimentary", "Complimentary"),
                ("none", "None"))  # fmt: skip

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "now":
            return queryset.exclude(access_source="").filter(
                Q(access_from__isnull=True) | Q(access_from__lte=now),
                Q(access_until__isnull=True) | Q(access_until__gt=now),
            )
        if self.value() in ("subscription", "complimentary"):
            return queryset.filter(access_source__contains=self.value())
        if self.value() == "none":
            return queryset.filter(Q(access_source="") | Q(access_until__lte=now))
        return queryset


# The access columns are the subscriptions app's to write (User.save never writes them): shown here, read-only.
ACCESS_FIELDS = ("access_now", "access_source", "access_from", "access_until", "access_reason", "trial_used_at")


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    form = UserChangeForm
    add_form = UserCreationForm
    list_display = ("email", "name", "access_now", "access_source", "access_until", "is_staff", "date_joined")
    list_filter = (AccessFilter, "is_staff", "is_superuser", "is_active")
    search_fields = ("email", "name")
    ordering = ("-date_joined",)
    readonly_fields = ("date_joined", "last_login", *ACCESS_FIELDS)
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Profile", {"fields": ("name",)}),
        ("Full access (from subscriptions and complimentary access)", {"fields": ACCESS_FIELDS}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )

    @admin.display(description="full access now", boolean=True)
    def access_now(self, obj):
        return obj.has_entitlement_at(timezone.now())

    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)

    # Deleting readers goes through accounts_close, as a reader's own deletion does: their Stripe side is closed
    # first (open checkouts expired, subscriptions cancelled at once, the customer deleted), and while that cannot be
    # done nothing is deleted. The confirmation pages say what ends at once (templates/admin/accounts/user/).
    actions = ["delete_selected"]
    delete_confirmation_template = "admin/accounts/user/delete_confirmation.html"
    delete_selected_confirmation_template = "admin/accounts/user/delete_selected_confirmation.html"

    def get_deleted_objects(self, objs, request):
        # Moderators may not delete a review on its own (they hide it), nor anyone a Stripe customer or subscription
        # (Stripe is their source), but a reader's own rows go with their account (apps.accounts.deletion).
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        perms_needed -= account_content_names()
        return deleted, model_count, perms_needed, protected

    def render_delete_form(self, request, context):
        context["deletion_notices"] = _deletion_notices([context["object"]])
        return super().render_delete_form(request, context)

    def delete_view(self, request, object_id, extra_context=None):
        # Django's view runs in a transaction: a refusal raised through it rolls back its log entry too.
        try:
            return super().delete_view(request, object_id, extra_context)
        except AccountDeletionRefused as refusal:
            self.message_user(request, _refusal_message(refusal), messages.ERROR)
            return HttpResponseRedirect(request.path)

    @admin.action(permissions=["delete"], description="Delete selected %(verbose_name_plural)s")
    def delete_selected(self, request, queryset):
        """Django's action (its confirmation page, log entries and message), all or nothing."""
        try:
            with transaction.atomic():
                response = admin_delete_selected(self, request, queryset)
        except AccountDeletionRefused as refusal:
            self.message_user(request, _refusal_message(refusal), messages.ERROR)
            return None  # back to the list, nothing deleted
        if response is not None:  # the confirmation page, rendered once returned
            response.context_data["deletion_notices"] = _deletion_notices(queryset)
        return response

    def delete_model(self, request, obj):
        accounts_close(users=User.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        accounts_close(users=queryset)


def _deletion_notices(users) -> list[tuple[User, str]]:
    """What each deletion ends at once besides the account (a running subscription), reader by reader."""
    return [(user, notice) for user in users for notice in account_deletion_notices(user)]


def _refusal_message(refusal: AccountDeletionRefused) -> str:
    return (
        f"Nothing was deleted: the billing of {refusal.user} could not be closed at Stripe (Stripe could not be "
        "reached, or refused). Try again in a few minutes; whatever was closed at Stripe by then stays closed."
    )
