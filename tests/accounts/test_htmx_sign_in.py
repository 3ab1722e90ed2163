"""An htmx request from a page whose session has expired sends the browser to sign in, and back."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def htmx_headers(current_url):
    return {"HX-Request": "true", "HX-Current-URL": current_url}


def test_an_htmx_post_without_a_session_redirects_the_page_to_sign_in_and_back(client):
    response = client.post(
        reverse("reviews:review-create"), {"stars": "5"}, headers=htmx_headers("http://testserver/reviews/?sort=newest")
    )

    assert response.status_code == 200
    assert (
        "Location" not in response
    )  # htmx would follow it inside the request and swap the sign-in page into the block
    assert response["HX-Redirect"] == reverse("account_login") + "?next=/reviews/%3Fsort%3Dnewest"


def test_marking_a_capsule_complete_after_the_session_expired_sends_the_page_to_sign_in(client):
    response = client.post(
        reverse("reading:complete", args=["any-capsule"]),
        headers=htmx_headers("http://testserver/capsules/any-capsule/"),
    )

    assert response["HX-Redirect"] == reverse("account_login") + "?next=/capsules/any-capsule/"


def test_the_way_back_never_leaves_the_site(client):
    response = client.post(reverse("reviews:review-create"), headers=htmx_headers("https://elsewhere.example/phish"))

    assert response["HX-Redirect"] == reverse("account_login") + "?next=/"


def test_requests_without_htmx_keep_the_plain_redirect(client):
    response = client.post(reverse("reviews:review-create"), {"stars": "5"})

    assert response.status_code == 302
    assert response["Location"] == reverse("account_login") + "?next=" + reverse("reviews:review-create")
    assert "HX-Redirect" not in response


def test_other_htmx_redirects_are_left_alone(client, reader):
    client.force_login(reader)
    response = client.get(
        reverse("account_login"), headers=htmx_headers("http://testserver/")
    )  # signed in already: allauth sends them on

    assert response.status_code == 302 and "HX-Redirect" not in response
