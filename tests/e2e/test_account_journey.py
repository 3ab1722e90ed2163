import re

import pytest
from allauth.account.models import EmailAddress
from playwright.sync_api import expect

from apps.accounts.models import User

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "warp-tiles-and-swizzles-2026"


def test_sign_up_verify_from_the_outbox_log_out_and_log_back_in(page, live_server, mailoutbox, eager_tasks):
    # eager_tasks: the account email's task (apps.accounts.mail) runs in the server as it is queued.
    page.goto(live_server.url + "/")
    page.get_by_role("link", name="Sign up").first.click()

    page.fill("input[name=email]", "ada@example.org")
    page.get_by_label("Public name (optional)").fill("Ada L.")  # issue 20: the name shown to others
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.locator("main form button[type=submit]").click()
    expect(page.locator("main")).to_contain_text("Verify Your Email Address")

    assert len(mailoutbox) == 1
    link = re.search(r"https?://\S+/accounts/confirm-email/\S+", mailoutbox[0].body).group(0)
    page.goto(link)
    page.locator("main form button[type=submit]").click()

    assert EmailAddress.objects.get(email="ada@example.org").verified
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()  # signed in by confirming
    assert User.objects.get(email="ada@example.org").name == "Ada L."
    expect(page.locator(".account-nav__user")).to_have_text("Ada L.")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("link", name="Sign in").first).to_be_visible()

    page.get_by_role("link", name="Sign in").first.click()
    page.fill("input[name=login]", "ada@example.org")
    page.fill("input[name=password]", PASSWORD)
    page.locator("main form button[type=submit]").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()

    page.goto(live_server.url + "/accounts/profile/")
    expect(page.locator("main")).to_contain_text("ada@example.org")
    assert User.objects.get(email="ada@example.org").last_login is not None


def test_a_wrong_password_shows_an_error_in_the_page(page, live_server):
    User.objects.create_user("bo@example.org", PASSWORD)
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=login]", "bo@example.org")
    page.fill("input[name=password]", "not-the-password")
    page.locator("main form button[type=submit]").click()

    expect(page.locator("main")).to_contain_text("not correct")
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
