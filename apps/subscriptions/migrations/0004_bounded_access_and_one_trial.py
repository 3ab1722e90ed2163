"""Issue 42: bounded access windows (recomputed here for every reader, with why), one trial per reader and per card,
and dead letters mailed to the operators."""

from datetime import timedelta

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone


def entitlements_bound(apps, schema_editor):
    # The rule is a pure function of the rows' fields, so the historical models serve.
    from apps.subscriptions.services.entitlement import entitlement_from

    User = apps.get_model("accounts", "User")
    Subscription = apps.get_model("subscriptions", "Subscription")
    ComplimentaryAccess = apps.get_model("subscriptions", "ComplimentaryAccess")
    now = timezone.now()
    grace = timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS)
    margin = timedelta(hours=settings.SUBSCRIPTION_RENEWAL_MARGIN_HOURS)
    user_ids = (
        set(Subscription.objects.values_list("customer__user_id", flat=True))
        | set(ComplimentaryAccess.objects.values_list("user_id", flat=True))
        | set(User.objects.exclude(access_source="").values_list("pk", flat=True))
    )
    for user_id in user_ids:
        entitlement = entitlement_from(
            Subscription.objects.filter(customer__user_id=user_id),
            ComplimentaryAccess.objects.filter(user_id=user_id),
            now=now,
            grace=grace,
            margin=margin,
        )
        first_trial = (
            Subscription.objects.filter(customer__user_id=user_id, trial_end__isnull=False)
            .order_by("stripe_created")
            .values_list("stripe_created", flat=True)
            .first()
        )
        User.objects.filter(pk=user_id).update(
            access_source=entitlement.source,
            access_from=entitlement.starts_at,
            access_until=entitlement.ends_at,
            access_reason=entitlement.reason,
            trial_used_at=first_trial,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('subscriptions', '0003_merge_entitlements_and_dead_letters'),
        ('accounts', '0006_user_access_written_by_service'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='stripeevent',
            name='operators_notified_at',
            field=models.DateTimeField(blank=True, help_text='When the operators were mailed about this dead letter.', null=True),
        ),
        migrations.AddField(
            model_name='subscription',
            name='payment_method_id',
            field=models.CharField(blank=True, help_text="Its card's fingerprint allows one trial.", max_length=255, verbose_name='Stripe payment method id'),
        ),
        migrations.CreateModel(
            name='TrialFingerprint',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('fingerprint', models.CharField(max_length=64, unique=True)),
                ('subscription_stripe_id', models.CharField(max_length=255, verbose_name="first trial's subscription")),
                ('trialed_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.RunPython(entitlements_bound, migrations.RunPython.noop),
    ]
