"""A reader deletes their own account (confirmed with their password) and downloads their data, from the account
page. Nothing of theirs remains but counts that name no one; a subscription that Stripe still bills blocks the
deletion until it has ended, and the page says how to cancel it."""

import json

import pytest
from django.test import Client

from apps.accounts.models import User
from apps.accounts.services import AccountDeletionNotConfirmed, AccountDeletionRefused, user_account_delete
from tests.accounts.personal import rating_counts, reader_with_everything, rows_left, visible_reviews
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_account_page_offers_the_export_and_the_deletion(mini_book, reader):
    page = signed_in(reader).get("/accounts/profile/").content.decode()
    assert 'href="/accounts/profile/data.json"' in page and 'href="/accounts/delete/"' in page


def test_the_export_holds_the_readers_profile_progress_reviews_submissions_and_billing(mini_book):
    traces = reader_with_everything(mini_book)
    response = signed_in(User.objects.get(pk=traces.pk)).get("/accounts/profile/data.json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith('attachment; filename="kernel-engineering-data-')
    assert "no-store" in response["Cache-Control"]
    data = json.loads(response.content)
    assert data["profile"]["email"] == traces.email and data["profile"]["public_name"] == "Leaving Reader"
    assert data["profile"]["email_addresses"] == [{"email": traces.email, "verified": True, "primary": True}]
    assert [(p["capsule"]["slug"], p["position"]) for p in data["reading_progress"]] == [("free-one", 0.5)]
    assert [r["text"] for r in data["reviews"]["reviews"]] == [traces.review_text]
    assert [r["note"] for r in data["reviews"]["reports_made"]] == ["A report by the leaving reader."]
    [submission] = data["submissions"]
    assert traces.source_marker in submission["source"] and submission["capsule"] == "free-one"
    assert data["billing"]["stripe_customer"] == traces.customer_id
    assert [s["status"] for s in data["billing"]["subscriptions"]] == ["canceled"]
    assert [c["reason"] for c in data["billing"]["complimentary_access"]] == ["Beta reader"]
    # Nothing of another reader's.
    assert (
        "Staying Reader" not in response.content.decode() and "stays with its author" not in response.content.decode()
    )


def test_export_and_deletion_need_a_signed_in_reader(mini_book):
    for path in ("/accounts/profile/data.json", "/accounts/delete/"):
        assert Client().get(path).status_code == 302


def test_deleting_leaves_nothing_of_the_reader_but_anonymous_counts(mini_book):
    traces = reader_with_everything(mini_book)
    assert rating_counts(mini_book) == (2, 8) and visible_reviews(mini_book) == 2
    client = signed_in(User.objects.get(pk=traces.pk))
    response = client.post("/accounts/delete/", {"confirmation": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/"
    assert rows_left(traces) == []
    assert rating_counts(mini_book) == (1, 3) and visible_reviews(mini_book) == 1  # their 5 stars left the ratings
    assert User.objects.filter(email="staying.reader@example.org").exists()
    assert client.get("/accounts/profile/").status_code == 302  # signed out
    assert "have been deleted" in client.get("/").content.decode()


def test_a_wrong_password_deletes_nothing(mini_book):
    traces = reader_with_everything(mini_book)
    response = signed_in(User.objects.get(pk=traces.pk)).post("/accounts/delete/", {"confirmation": "nope"})
    assert response.status_code == 400 and "That is not your password." in response.content.decode()
    assert User.objects.filter(pk=traces.pk).exists() and rating_counts(mini_book) == (2, 8)


def test_a_reader_without_a_password_confirms_with_their_email(mini_book, reader):
    reader.set_unusable_password()
    reader.save()
    with pytest.raises(AccountDeletionNotConfirmed):
        user_account_delete(user=reader, confirmation="someone@example.org")
    user_account_delete(user=reader, confirmation=" Reader@Example.org ")
    assert not User.objects.filter(pk=reader.pk).exists()


@pytest.mark.parametrize("status", ["active", "trialing", "past_due"])
def test_a_running_subscription_blocks_the_deletion_and_the_page_says_how_to_cancel(mini_book, status):
    traces = reader_with_everything(mini_book, subscription_status=status)
    user = User.objects.get(pk=traces.pk)
    page = signed_in(user).get("/accounts/delete/").content.decode()
    assert "Your account cannot be deleted yet." in page and "Manage billing" in page and "Cancel plan" in page
    assert 'name="confirmation"' not in page
    response = signed_in(user).post("/accounts/delete/", {"confirmation": PASSWORD})
    assert response.status_code == 400 and "cannot be deleted yet" in response.content.decode()
    with pytest.raises(AccountDeletionRefused):
        user_account_delete(user=user, confirmation=PASSWORD)
    assert User.objects.filter(pk=traces.pk).exists() and rows_left(traces)


def test_a_subscription_cancelled_at_period_end_blocks_until_it_ends(mini_book):
    traces = reader_with_everything(mini_book, subscription_status="active")
    user = User.objects.get(pk=traces.pk)
    from apps.subscriptions.models import Subscription

    Subscription.objects.filter(customer__user=user).update(cancel_at_period_end=True)
    page = signed_in(user).get("/accounts/delete/").content.decode()
    assert "Your subscription is cancelled and ends on" in page


def test_the_password_cannot_be_guessed_through_the_deletion_form(mini_book, reader):
    client = signed_in(reader)
    for _ in range(5):
        assert (
            "That is not your password." in client.post("/accounts/delete/", {"confirmation": "guess"}).content.decode()
        )
    page = client.post("/accounts/delete/", {"confirmation": PASSWORD}).content.decode()
    assert "Too many attempts: try again within 15 minutes." in page
    assert User.objects.filter(pk=reader.pk).exists()
