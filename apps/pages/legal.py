"""The pages a paid site owes its readers: terms, privacy, refunds, contact. Their text is code
(templates/pages/legal/), written once for this platform; who runs the site comes from the OPERATOR_* settings,
so an operator fills in their details without touching a template (and edits the templates where their law or
policy differs)."""

from django.conf import settings
from django.core import checks
from django.http import Http404
from django.shortcuts import render

from apps.catalog import selectors as catalog
from config.caching import public_when_anonymous

PAGES = {
    "terms": "Terms of service",
    "privacy": "Privacy policy",
    "refunds": "Refund policy",
    "contact": "Contact",
}
REQUIRED_OPERATOR_SETTINGS = ("OPERATOR_NAME", "OPERATOR_EMAIL", "OPERATOR_ADDRESS")


def operator() -> dict:
    return {
        "name": settings.OPERATOR_NAME,
        "email": settings.OPERATOR_EMAIL,
        "address_lines": [line.strip() for line in settings.OPERATOR_ADDRESS.split(",") if line.strip()],
        "jurisdiction": settings.OPERATOR_JURISDICTION,
        "refund_days": settings.REFUND_WINDOW_DAYS,
        "missing": [name for name in REQUIRED_OPERATOR_SETTINGS if not getattr(settings, name)],
    }


@public_when_anonymous
def legal_page(request, page: str):
    if page not in PAGES:
        raise Http404("No such page")
    context = {"page": page, "page_title": PAGES[page], "operator": operator(), "book": catalog.book_get()}
    return render(request, f"pages/legal/{page}.html", context)


@checks.register(checks.Tags.security, deploy=True)
def operator_details_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    missing = operator()["missing"]
    if not missing:
        return []
    return [
        checks.Warning(
            f"{', '.join(missing)} not set: the terms, privacy, refund and contact pages name no operator.",
            hint="Set them in the environment (.env.example); the pages' text is in templates/pages/legal/.",
            id="pages.W001",
        )
    ]
