from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import UserChangeForm as DjangoUserChangeForm
from django.contrib.auth.forms import UserCreationForm as DjangoUserCreationForm
from django.db.models import Q
from django.utils import timezone

from apps.accounts.deletion import account_content_names
from apps.accounts.models import User
from apps.accounts.services import users_delete


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

    def get_deleted_objects(self, objs, request):
        # Moderators may not delete a review on its own (they hide it), but a reader's reviews go
        # with their account (apps.accounts.deletion). Stripe customers still block deletion:
        # cancel in Stripe first.
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        perms_needed -= account_content_names()
        return deleted, model_count, perms_needed, protected

    # Through the service, so what the deleted readers wrote leaves the books' ratings at once.
    def delete_model(self, request, obj):
        users_delete(users=User.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        users_delete(users=queryset)
