"""A reader downloads their data and deletes their account in the browser; the database then holds nothing of
theirs but counts that name no one (tests/accounts/personal.py looks through every model)."""

import json

import pytest
from playwright.sync_api import expect

from apps.accounts.models import User
from tests.accounts.personal import rating_counts, reader_with_everything, rows_left
from tests.e2e.pages import sign_in
from tests.factories import PASSWORD
from tests.subscriptions.conftest import localstripe, stripe_local  # noqa: F401  (Stripe is closed first)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_reader_downloads_their_data_then_deletes_their_account(page, live_server, mini_book, stripe_local):
    traces = reader_with_everything(mini_book)
    sign_in(page, live_server.url, traces.email)
    page.goto(live_server.url + "/accounts/profile/")

    with page.expect_download() as download:
        page.get_by_role("link", name="Download your data").click()
    data = json.loads(download.value.path().read_text())
    assert data["profile"]["email"] == traces.email and data["reviews"]["reviews"][0]["text"] == traces.review_text

    page.get_by_role("link", name="Delete your account").click()
    expect(page.locator("h1")).to_have_text("Delete your account")
    page.get_by_label("Your password").fill("not my password")
    page.get_by_role("button", name="Delete my account").click()
    expect(page.locator("main")).to_contain_text("That is not your password.")
    assert User.objects.filter(pk=traces.pk).exists()

    page.get_by_label("Your password").fill(PASSWORD)
    page.get_by_role("button", name="Delete my account").click()
    expect(page.locator("main")).to_contain_text("Your account and everything of yours on this site have been deleted.")
    expect(page.get_by_role("link", name="Sign in").first).to_be_attached()

    assert rows_left(traces) == []
    assert rating_counts(mini_book) == (1, 3)  # the other reader's 3 stars; theirs left the ratings

    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=login]", traces.email)
    page.fill("input[name=password]", PASSWORD)
    page.locator("main form button[type=submit]").click()
    expect(page.locator("main")).to_contain_text("not correct")
