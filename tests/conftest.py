from pathlib import Path

import pytest
from django.core.cache import caches

from tests.factories import PASSWORD, UserFactory

E2E = Path(__file__).parent / "e2e"
# Fixtures that start real processes or servers: a test using one takes seconds.
SLOW_FIXTURES = {"celery_workers", "celery_worker", "localstripe", "live_server"}


def pytest_collection_modifyitems(items):
    """`e2e` for every test under tests/e2e, `slow` for every test that starts workers or servers
    (others carry `slow` themselves), so that `-m "not slow and not e2e"` is the quick loop."""
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)
        if SLOW_FIXTURES.intersection(item.fixturenames):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _fresh_cache():
    # Rate limits count in the (Redis) cache: every test starts with a clean slate (and without the process's own
    # copies of public pages, config/caching.py).
    for each in caches.all():
        each.clear()
    yield
    for each in caches.all():
        each.clear()


@pytest.fixture
def password():
    return PASSWORD


@pytest.fixture
def reader(db):
    return UserFactory(email="reader@example.org")


@pytest.fixture
def staff(db):
    return UserFactory(email="staff@example.org", is_staff=True, is_superuser=True)


MINI_BOOK = Path(__file__).parent / "catalog" / "books" / "mini"
# Planted in the locked capsule's body and figure of the mini book: must reach only readers with access.
LOCKED_SENTINELS = ("SENTINEL-LOCKED-PARAGRAPH", "SENTINEL-LOCKED-FIGURE")


@pytest.fixture
def mini_book(db):
    """A three-capsule book (one free, two locked) imported through the real importer."""
    from apps.catalog.models import Book
    from apps.catalog.services import book_import

    book_import(folder=MINI_BOOK)
    return Book.objects.get(slug="mini-book")


@pytest.fixture
def eager_tasks():
    """Celery tasks run in this process as they are sent (no worker): where a test needs their effect, not the queue."""
    from config.celery import app

    conf = app.conf
    saved = conf.task_always_eager, conf.task_eager_propagates
    conf.task_always_eager, conf.task_eager_propagates = True, True
    yield conf
    conf.task_always_eager, conf.task_eager_propagates = saved


@pytest.fixture
def mail_worker(django_capture_on_commit_callbacks):
    """`with mail_worker(): ...`: account emails go out as in production, queued after the commit and sent by the
    Celery task (apps.accounts.mail), here run at the end of the block in this process."""
    from contextlib import contextmanager

    from config.celery import app

    @contextmanager
    def delivering():
        conf = app.conf
        saved = conf.task_always_eager, conf.task_eager_propagates
        conf.task_always_eager, conf.task_eager_propagates = True, True
        try:
            with django_capture_on_commit_callbacks(execute=True) as callbacks:
                yield callbacks
        finally:
            conf.task_always_eager, conf.task_eager_propagates = saved

    return delivering
