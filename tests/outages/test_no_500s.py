"""No 500 on a page a reader uses (issue 28): the cache Redis down (pricing with Stripe configured, the share
pictures), the broker down (EPUB downloads, and the build is made once it is back), and hostile addresses (a figure
name with %00, GitHub sign-in where GitHub is not configured). The outages here are closed ports: fast, in-process.
SMTP down is tests/outages/test_smtp_outage.py; the real servers stopped and started, test_queue_outages.py."""

import pytest
from django.test import Client

from apps.reading.models import EpubBuild
from config.celery import app as celery_app
from tests.outages import broker_down, closed_port
from tests.reading.test_epub import epub_root  # noqa: F401  (autouse: builds in a folder of the test's own)
from tests.subscriptions.visitors import make_visitor

pytestmark = pytest.mark.django_db


@pytest.fixture
def cache_down(settings):
    caches = {**settings.CACHES}
    caches["default"] = {**caches["default"], "LOCATION": f"redis://127.0.0.1:{closed_port()}/0"}
    settings.CACHES = caches


def test_pricing_with_stripe_configured_and_the_cache_down(mini_book, settings, cache_down):
    # The Prices are read from Stripe through the shared cache; Stripe is unreachable too, the worst case.
    settings.STRIPE_SECRET_KEY, settings.STRIPE_WEBHOOK_SECRET = "sk_test_not_a_real_key", "whsec_not_a_real_one"
    settings.STRIPE_PRICE_MONTHLY, settings.STRIPE_PRICE_YEARLY = "price_monthly", "price_yearly"
    settings.STRIPE_API_BASE = f"http://127.0.0.1:{closed_port()}"
    client = Client(raise_request_exception=False)
    assert client.get("/pricing/").status_code == 200
    client.force_login(make_visitor("free"))
    assert client.get("/pricing/").status_code == 200


@pytest.mark.parametrize("path", ["/share/book.png", "/share/parts/1.png"])
def test_share_pictures_with_the_cache_down(mini_book, cache_down, path):
    response = Client(raise_request_exception=False).get(path)
    assert response.status_code == 200 and response.content.startswith(b"\x89PNG")


@pytest.fixture
def celery_conf():
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_eager_propagates
    yield conf
    conf.task_always_eager, conf.task_eager_propagates = saved


def test_epub_download_with_the_broker_down_and_the_build_made_once_it_is_back(
    mini_book, monkeypatch, django_capture_on_commit_callbacks, celery_conf
):
    client = Client(raise_request_exception=False)
    client.force_login(make_visitor("active"))
    with broker_down(monkeypatch), django_capture_on_commit_callbacks(execute=True):
        for path in ("/book.epub", "/sample.epub"):
            assert client.get(path).status_code == 202, path  # "being prepared", not a 500
            assert client.get(path).status_code == 202, path
    assert set(EpubBuild.objects.values_list("status", flat=True)) == {EpubBuild.Status.QUEUED}

    # The broker is back (and a worker takes the job: eager here): the page's next poll sends the build again.
    celery_conf.task_always_eager, celery_conf.task_eager_propagates = True, True
    with django_capture_on_commit_callbacks(execute=True):
        client.get("/epub/sample/status/", headers={"HX-Request": "true"})
    download = client.get("/sample.epub")
    assert download.status_code == 200 and download["Content-Type"] == "application/epub+zip"
    assert EpubBuild.objects.filter(edition="sample", status=EpubBuild.Status.READY).count() == 1


@pytest.mark.parametrize("name", ["a%00.svg", "%00", "a.svg%00", "..%2f..%2fetc", "%ff.svg", "a%0a.svg"])
def test_a_hostile_figure_name_is_404(mini_book, name):
    capsule = mini_book.capsules.first()
    response = Client(raise_request_exception=False).get(f"/capsules/{capsule.slug}/figures/{name}")
    assert response.status_code == 404


@pytest.mark.parametrize("path", ["/accounts/github/login/", "/accounts/github/login/callback/?code=x&state=y"])
def test_github_sign_in_without_keys_is_404(db, settings, path):
    settings.SOCIALACCOUNT_PROVIDERS = {"github": {"SCOPE": ["user:email"]}}
    assert Client(raise_request_exception=False).get(path).status_code == 404


def test_github_sign_in_with_keys_goes_to_github(db, settings):
    settings.SOCIALACCOUNT_PROVIDERS = {
        "github": {"SCOPE": ["user:email"], "APPS": [{"client_id": "Iv1.abc", "secret": "s3cret"}]}
    }
    response = Client().post("/accounts/github/login/")
    assert response.status_code == 302 and response["Location"].startswith("https://github.com/login/oauth/authorize")


@pytest.mark.parametrize("broker", ["up", "down"])
def test_sign_up_and_password_reset_with_smtp_down(
    db, settings, monkeypatch, django_capture_on_commit_callbacks, broker
):
    # The mail goes to the queue after the commit; with the broker down too, one attempt from the request, logged.
    # (tests/outages/test_smtp_outage.py: the worker delivers it once the mail server is back.)
    from contextlib import nullcontext

    from apps.accounts.models import User
    from tests.factories import UserFactory

    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS = "127.0.0.1", closed_port(), False
    existing = UserFactory()
    client = Client(raise_request_exception=False)
    with broker_down(monkeypatch) if broker == "down" else nullcontext():
        with django_capture_on_commit_callbacks(execute=True):
            signup = client.post(
                "/accounts/signup/",
                {
                    "email": "smtp.down@example.org",
                    "password1": "a-long-pass-phrase-42",
                    "password2": "a-long-pass-phrase-42",
                },
            )
        with django_capture_on_commit_callbacks(execute=True):
            reset = Client(raise_request_exception=False).post("/accounts/password/reset/", {"email": existing.email})
    assert signup.status_code == 302 and reset.status_code == 302
    assert User.objects.filter(email="smtp.down@example.org").count() == 1
