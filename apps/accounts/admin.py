from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import UserChangeForm as DjangoUserChangeForm
from django.contrib.auth.forms import UserCreationForm as DjangoUserCreationForm

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


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    form = UserChangeForm
    add_form = UserCreationForm
    list_display = ("email", "name", "is_staff", "is_active", "date_joined", "last_login")
    list_filter = ("is_staff", "is_superuser", "is_active")
    search_fields = ("email", "name")
    ordering = ("-date_joined",)
    readonly_fields = ("date_joined", "last_login")
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Profile", {"fields": ("name",)}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
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
