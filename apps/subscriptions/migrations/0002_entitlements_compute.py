"""Every reader's access window, computed once from the stored subscriptions and grants (afterwards the services
keep it current)."""

from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone


def entitlements_compute(apps, schema_editor):
    # The rule itself is a pure function of the rows' fields, so the historical models serve.
    from apps.subscriptions.services.entitlement import entitlement_from

    User = apps.get_model("accounts", "User")
    Subscription = apps.get_model("subscriptions", "Subscription")
    ComplimentaryAccess = apps.get_model("subscriptions", "ComplimentaryAccess")
    now = timezone.now()
    grace = timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS)
    user_ids = set(Subscription.objects.values_list("customer__user_id", flat=True)) | set(
        ComplimentaryAccess.objects.values_list("user_id", flat=True)
    )
    for user_id in user_ids:
        entitlement = entitlement_from(
            Subscription.objects.filter(customer__user_id=user_id),
            ComplimentaryAccess.objects.filter(user_id=user_id),
            now=now,
            grace=grace,
        )
        User.objects.filter(pk=user_id).update(
            access_source=entitlement.source, access_from=entitlement.starts_at, access_until=entitlement.ends_at
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_user_access_entitlement"),
        ("subscriptions", "0001_initial"),
    ]

    operations = [migrations.RunPython(entitlements_compute, migrations.RunPython.noop)]
