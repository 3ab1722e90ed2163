"""Sign-up, verification, sign-in, sign-out, password reset and change, through the
site's own pages with Django's test client, against PostgreSQL and the Redis cache."""

import re

import pytest
from allauth.account.models import EmailAddress
from django.urls import reverse

from apps.accounts.models import User

pytestmark = pytest.mark.django_db

STRONG_PASSWORD = "tiled-sgemm-at-93-percent"


def _signup(client, email, password=STRONG_PASSWORD, password2=None):
    return client.post(
        reverse("account_signup"), {"email": email, "password1": password, "password2": password2 or password}
    )


def _login(client, email, password):
    return client.post(reverse("account_login"), {"login": email, "password": password})


def _link_from(message) -> str:
    return re.search(r"https?://[^/\s]+(/\S+)", message.body).group(1)


def test_signup_sends_a_verification_email_and_login_waits_for_it(client, mailoutbox, mail_worker):
    with mail_worker():
        response = _signup(client, "New.Reader@Example.org")

    assert response.status_code == 302
    assert response["Location"] == reverse("account_email_verification_sent")
    user = User.objects.get()
    assert user.email == "new.reader@example.org"  # stored in one case
    assert not EmailAddress.objects.get(user=user).verified
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["new.reader@example.org"]

    # Until the address is verified, signing in leads back to "check your email".
    client.logout()
    response = _login(client, "new.reader@example.org", STRONG_PASSWORD)
    assert response["Location"] == reverse("account_email_verification_sent")

    confirm_path = _link_from(mailoutbox[0])
    assert client.get(confirm_path).status_code == 200  # a page with a button, no change on GET
    assert not EmailAddress.objects.get(user=user).verified
    response = client.post(confirm_path)
    assert response.status_code == 302
    assert EmailAddress.objects.get(user=user).verified
    assert client.get(reverse("accounts:profile")).status_code == 200


def test_signup_with_a_taken_email_in_any_case_is_refused_clearly(client, reader):
    response = _signup(client, "READER@example.org")

    assert response.status_code == 200
    assert "already registered" in response.content.decode()
    assert User.objects.filter(email__iexact="reader@example.org").count() == 1


@pytest.mark.parametrize(
    ("password", "message"),
    [("short1", "too short"), ("password1234", "too common"), ("1234567890123", "entirely numeric")],
)
def test_signup_with_a_weak_password_is_refused_clearly(client, password, message):
    response = _signup(client, "weak@example.org", password)

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not User.objects.exists()


def test_signup_with_mismatched_passwords_is_refused(client):
    response = _signup(client, "typo@example.org", STRONG_PASSWORD, STRONG_PASSWORD + "x")

    assert response.status_code == 200
    assert "same password" in response.content.decode()
    assert not User.objects.exists()


def test_login_with_email_in_any_case_and_logout(client, reader, password):
    response = _login(client, "Reader@EXAMPLE.org", password)
    assert response.status_code == 302
    assert client.get(reverse("accounts:profile")).status_code == 200

    response = client.post(reverse("account_logout"))
    assert response.status_code == 302
    assert client.get(reverse("accounts:profile"))["Location"].startswith(reverse("account_login"))


def test_wrong_password_is_a_form_error(client, reader):
    response = _login(client, reader.email, "not-my-password")

    assert response.status_code == 200
    assert "not correct" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_repeated_wrong_passwords_are_rate_limited_even_for_the_right_one(client, reader, password):
    for _ in range(5):
        assert _login(client, reader.email, "guess-guess-guess").status_code == 200

    response = _login(client, reader.email, password)

    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_forged_csrf_token_is_refused_with_a_clear_page(reader, password):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.get(reverse("account_login"))  # sets the real CSRF cookie
    response = browser.post(
        reverse("account_login"), {"login": reader.email, "password": password, "csrfmiddlewaretoken": "forged" * 8}
    )

    assert response.status_code == 403
    assert "Kernel Engineering" in response.content.decode()
    assert "_auth_user_id" not in browser.session


def test_password_reset_by_email_then_login_with_the_new_password(client, reader, mailoutbox, mail_worker):
    with mail_worker():
        response = client.post(reverse("account_reset_password"), {"email": reader.email})
    assert response.status_code == 302
    assert len(mailoutbox) == 1

    key_path = _link_from(mailoutbox[0])
    form_page = client.get(key_path, follow=True)  # allauth moves the key into the session
    form_path = form_page.redirect_chain[-1][0] if form_page.redirect_chain else key_path
    response = client.post(form_path, {"password1": "a-brand-new-passphrase", "password2": "a-brand-new-passphrase"})
    assert response.status_code == 302

    client.logout()
    assert _login(client, reader.email, "a-brand-new-passphrase").status_code == 302


def test_password_reset_for_an_unknown_address_says_so_and_sends_nothing(client, mailoutbox):
    response = client.post(reverse("account_reset_password"), {"email": "nobody@example.org"})

    assert response.status_code == 200
    assert "not assigned to any user account" in response.content.decode()
    assert mailoutbox == []


def test_password_change_requires_the_old_password(client, reader, password):
    client.force_login(reader)
    url = reverse("account_change_password")

    response = client.post(
        url, {"oldpassword": "wrong-old-one", "password1": "next-passphrase-2027", "password2": "next-passphrase-2027"}
    )
    assert response.status_code == 200
    reader.refresh_from_db()
    assert reader.check_password(password)

    response = client.post(
        url, {"oldpassword": password, "password1": "next-passphrase-2027", "password2": "next-passphrase-2027"}
    )
    assert response.status_code == 302
    reader.refresh_from_db()
    assert reader.check_password("next-passphrase-2027")


def test_profile_needs_a_signed_in_reader(client):
    response = client.get(reverse("accounts:profile"))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))
