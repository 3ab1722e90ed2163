"""Sessions return to Django's own store (django.contrib.sessions, cached_db): every unexpired session of the
accounts table is copied into django_session as it is (both hold Django's encoding of the same data), so no reader
is signed out, and the accounts table goes."""

from django.db import migrations


def sessions_copy_back(apps, schema_editor):
    from django.utils import timezone

    OurSession = apps.get_model("accounts", "Session")
    DjangoSession = apps.get_model("sessions", "Session")
    live = OurSession.objects.filter(expire_date__gt=timezone.now())
    for session in live.iterator(chunk_size=2000):
        # A key already in Django's table is an older copy (made when the accounts table was introduced): ours wins.
        DjangoSession.objects.update_or_create(
            session_key=session.session_key,
            defaults={"session_data": session.session_data, "expire_date": session.expire_date},
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_user_access_entitlement"),
        ("sessions", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(sessions_copy_back, migrations.RunPython.noop, elidable=True),
        migrations.DeleteModel(name="Session"),
    ]
