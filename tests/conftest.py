import pytest
from django.core.cache import cache

from tests.factories import PASSWORD, UserFactory


@pytest.fixture(autouse=True)
def _fresh_cache():
    # Rate limits count in the (Redis) cache: every test starts with a clean slate.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def password():
    return PASSWORD


@pytest.fixture
def reader(db):
    return UserFactory(email="reader@example.org")


@pytest.fixture
def staff(db):
    return UserFactory(email="staff@example.org", is_staff=True, is_superuser=True)
