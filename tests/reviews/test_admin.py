"""Moderation in admin: hide and restore with a reason, filters, search, reports; deleting a reviewer."""

import pytest
from django.contrib.admin.models import LogEntry

from apps.reviews import services
from apps.reviews.models import Review, ReviewReport
from apps.subscriptions.models import Customer
from tests.reviews.conftest import TEXT, make_reader, recount, stored

pytestmark = pytest.mark.django_db
CHANGELIST = "/admin/reviews/review/"


@pytest.fixture
def reviews(book):
    spam = services.review_create(
        user=make_reader(book, name="Spam Bot"), book=book, rating=1, text="Cheap GPUs at www.spam.example, buy now!"
    )
    good = services.review_create(user=make_reader(book, name="Kind Reader"), book=book, rating=5, text=TEXT)
    services.review_report(review=spam, reporter=make_reader(book), reason="spam", note="an advert")
    return spam, good


def test_hiding_asks_for_a_reason_then_hides_and_records_it(client, staff, book, reviews):
    spam, good = reviews
    client.force_login(staff)

    ask = client.post(CHANGELIST, {"action": "hide", "_selected_action": [spam.pk]})
    assert (
        ask.status_code == 200
        and "These reviews will be hidden" in ask.content.decode()
        and "Cheap GPUs" in ask.content.decode()
    )

    missing = client.post(CHANGELIST, {"action": "hide", "_selected_action": [spam.pk], "apply": "1", "reason": ""})
    assert missing.status_code == 200 and "This field is required" in missing.content.decode()
    assert Review.objects.get(pk=spam.pk).status == Review.Status.VISIBLE

    done = client.post(
        CHANGELIST,
        {"action": "hide", "_selected_action": [spam.pk], "apply": "1", "reason": "Advertising"},
        follow=True,
    )

    assert "1 review(s) hidden" in done.content.decode()
    spam.refresh_from_db()
    assert (spam.status, spam.moderation_reason, spam.moderated_by) == (Review.Status.HIDDEN, "Advertising", staff)
    assert stored(book) == recount(book) and stored(book)["rating_count"] == 1
    assert ReviewReport.objects.get().resolved_at is not None
    assert LogEntry.objects.filter(object_id=str(spam.pk), change_message__contains="Advertising").exists()


def test_restoring_brings_a_review_back_into_the_aggregate(client, staff, book, reviews):
    spam, _ = reviews
    services.review_hide(review=spam, moderator=staff, reason="Advertising")
    client.force_login(staff)

    client.post(
        CHANGELIST, {"action": "restore", "_selected_action": [spam.pk], "apply": "1", "reason": "Appeal upheld"}
    )

    spam.refresh_from_db()
    assert spam.status == Review.Status.VISIBLE and spam.moderation_reason == "Appeal upheld"
    assert stored(book)["rating_count"] == 2


def test_the_review_list_filters_and_searches(client, staff, reviews):
    spam, good = reviews
    client.force_login(staff)

    def listed(query):
        html = client.get(CHANGELIST + query).content.decode()
        return {pk for pk in (spam.pk, good.pk) if f'name="_selected_action" value="{pk}"' in html}

    assert listed("") == {spam.pk, good.pk}
    assert listed("?reports=open") == {spam.pk}
    assert listed("?reports=none") == {good.pk}
    assert listed("?rating__exact=5") == {good.pk}
    assert listed("?q=cheap+gpus") == {spam.pk}
    assert listed("?q=Kind") == {good.pk}
    services.review_hide(review=spam, moderator=staff, reason="Advertising")
    assert listed("?status__exact=hidden") == {spam.pk}


def test_reports_are_listed_in_admin_and_on_the_review(client, staff, reviews):
    spam, _ = reviews
    client.force_login(staff)

    listing = client.get("/admin/reviews/reviewreport/").content.decode()
    assert (
        "Spam or advertising" in listing
        and "an advert" in listing
        and f"/admin/reviews/review/{spam.pk}/change/" in listing
    )
    change = client.get(f"/admin/reviews/review/{spam.pk}/change/").content.decode()
    assert "an advert" in change
    assert client.get("/admin/reviews/reviewreport/?resolved_at__isnull=True").status_code == 200


def test_moderators_cannot_rewrite_or_delete_readers_words(client, staff, reviews):
    spam, _ = reviews
    client.force_login(staff)
    client.post(f"/admin/reviews/review/{spam.pk}/change/", {"text": "Rewritten by staff", "rating": 5})
    assert Review.objects.get(pk=spam.pk).text.startswith("Cheap GPUs")
    assert client.get(f"/admin/reviews/review/{spam.pk}/delete/").status_code == 403


def test_deleting_a_reader_in_admin_takes_their_review_out_of_the_rating_at_once(client, staff, book, reviews):
    spam, good = reviews
    client.force_login(staff)

    client.post(f"/admin/accounts/user/{spam.user_id}/delete/", {"post": "yes"})

    assert not Review.objects.filter(pk=spam.pk).exists()
    assert stored(book) == recount(book) and stored(book)["rating_count"] == 1


def test_deleting_readers_in_bulk_in_admin_recounts_every_book_they_rated(client, staff, book, reviews):
    spam, good = reviews
    client.force_login(staff)

    client.post(
        "/admin/accounts/user/",
        {"action": "delete_selected", "_selected_action": [spam.user_id, good.user_id], "post": "yes"},
    )

    assert not Review.objects.exists()
    assert stored(book) == recount(book) and stored(book)["rating_count"] == 0


def test_a_reader_whose_stripe_side_cannot_be_closed_is_not_deleted_from_admin(client, staff, book, reviews):
    spam, _ = reviews
    Customer.objects.create(user=spam.user, stripe_id="cus_still_billed")
    client.force_login(staff)

    # Stripe is not configured here: admin closes a reader's Stripe side before deleting, so nothing is deleted.
    response = client.post(f"/admin/accounts/user/{spam.user_id}/delete/", {"post": "yes"})

    assert response.status_code == 302 and response.url == f"/admin/accounts/user/{spam.user_id}/delete/"
    assert Review.objects.filter(pk=spam.pk).exists() and stored(book)["rating_count"] == 2
