from django.conf import settings


def stripe_test_mode(request) -> dict:
    """`stripe_test_mode` for base.html's banner: every page says when payments go to the local stand-in."""
    return {"stripe_test_mode": settings.STRIPE_TEST_MODE}
