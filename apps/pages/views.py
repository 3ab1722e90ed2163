"""Pages composed from several apps: each app provides its part as a panel (plain data from a
function), and these views only put the panels together."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from apps.catalog import selectors as catalog
from apps.reading.panels import book_progress, progress_panel
from apps.reviews.panels import reviews_block
from apps.submissions.panels import exercise_panel, ladders_panel
from apps.submissions.selectors import capsule_findings
from config.caching import public_when_anonymous

# Pages differ per reader and may hold paid text: never kept by shared caches or the browser's disk cache.
private_page = cache_control(private=True, no_store=True)


@public_when_anonymous
def landing(request):
    book = catalog.book_get()
    parts = catalog.book_parts_with_capsules(book)
    return render(
        request,
        "pages/landing.html",
        {
            "book": book,
            "parts": parts,
            "totals": catalog.book_totals(parts),
            "reading": book_progress(request.user, book, parts),
            "reviews": reviews_block(book, request.user),
        },
    )


@require_GET
@login_required
@private_page
def capsule_progress(request, slug):
    capsule = catalog.capsule_get(slug)
    return render(
        request,
        "pages/capsule_progress.html",
        {
            "capsule": capsule,
            "reading": progress_panel(request.user, capsule),
            "exercise": exercise_panel(request.user, capsule),
            # What readers' profiled kernels hit most among the findings this capsule teaches the fix for (issue 43).
            "profile_findings": capsule_findings(capsule),
        },
    )


@require_GET
@login_required
@private_page
def my_progress(request):
    book = catalog.book_get()
    parts = catalog.book_parts_with_capsules(book)
    return render(
        request,
        "pages/my_progress.html",
        {
            "book": book,
            "parts": parts,
            "reading": book_progress(request.user, book, parts),
            "ladders": ladders_panel(request.user),
        },
    )
