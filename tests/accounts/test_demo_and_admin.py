import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.urls import reverse

from apps.accounts.models import User
from apps.accounts.selectors import anonymous_handle
from apps.demo.data import DEMO_PASSWORD, DEMO_READERS, demo_accounts_ensure

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_load_demo_creates_the_three_demo_accounts_ready_to_sign_in(client, capsys):
    call_command("load_demo")
    call_command("load_demo")  # idempotent

    demo_readers = {account.email for account in DEMO_READERS}  # the authors of the demo reviews (apps.reviews)
    assert (
        set(User.objects.values_list("email", flat=True))
        == {"admin@example.com", "reader@example.com", "subscriber@example.com"} | demo_readers
    )
    assert User.objects.get(email="admin@example.com").is_staff
    assert not User.objects.get(email="reader@example.com").is_staff
    assert "kernel-demo-pass" in capsys.readouterr().out
    response = client.post(reverse("account_login"), {"login": "reader@example.com", "password": DEMO_PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/"


def test_demo_accounts_are_refused_where_demo_data_is_not_allowed(settings):
    settings.DEMO_DATA_ALLOWED = False

    with pytest.raises(ImproperlyConfigured):
        demo_accounts_ensure()
    assert not User.objects.exists()


def test_admin_sends_anonymous_visitors_to_sign_in(client):
    response = client.get("/admin/")

    assert response.status_code == 302
    assert "login" in response["Location"]


def test_admin_is_branded_for_staff_and_closed_to_readers(client, staff, reader):
    client.force_login(staff)
    response = client.get("/admin/")
    assert response.status_code == 200
    assert "Kernel Engineering admin" in response.content.decode()
    assert client.get(reverse("admin:accounts_user_changelist") + "?q=reader").status_code == 200

    client.force_login(reader)
    assert client.get("/admin/").status_code == 302


def test_user_manager_normalises_and_guards_superusers():
    user = User.objects.create_user("Mixed.Case@Example.ORG", "pw-long-enough-123")
    assert user.email == "mixed.case@example.org"
    assert User.objects.get_by_natural_key("MIXED.case@example.org") == user
    # Issue 20: no name chosen, no part of the address shown (it showed "mixed.case").
    assert user.display_name == anonymous_handle(user.pk) and "mixed" not in user.display_name.lower()
    with pytest.raises(ValueError):
        User.objects.create_superuser("boss@example.org", "pw-long-enough-123", is_staff=False)


def test_admin_shows_each_readers_access_its_source_window_and_why(client, staff):
    from apps.subscriptions.services import complimentary_access_grant
    from tests.factories import UserFactory

    granted = UserFactory(email="granted@example.org")
    UserFactory(email="other@example.org")
    complimentary_access_grant(user=granted, reason="review copy")
    client.force_login(staff)

    page = client.get(reverse("admin:accounts_user_change", args=[granted.pk])).content.decode()
    assert "complimentary" in page and "review copy" in page  # source, and why
    assert 'name="access_source"' not in page  # shown, never edited here

    listed = client.get(reverse("admin:accounts_user_changelist"), {"access": "complimentary"}).content.decode()
    assert "granted@example.org" in listed and "other@example.org" not in listed
    assert "other@example.org" in client.get(reverse("admin:accounts_user_changelist"), {"access": "none"}).text
