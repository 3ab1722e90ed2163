from django.shortcuts import render

from apps.catalog import selectors
from apps.reading.policy import has_full_access
from apps.reading.selectors import continue_reading, progress_by_capsule
from apps.reviews.selectors import reviews_summary


def landing(request):
    book = selectors.book_get()
    parts = selectors.book_parts_with_capsules(book)
    progress = progress_by_capsule(request.user, book)
    return render(
        request,
        "catalog/landing.html",
        {
            "book": book,
            "parts": parts,
            "totals": selectors.book_totals(parts),
            "full_access": has_full_access(request.user),
            "progress": progress,
            "continue_capsule": continue_reading(parts, progress),
            "reviews": reviews_summary(book, request.user),
        },
    )
