"""A reader's reviews and reports in their data export (apps.accounts.export). Deleting the account deletes them
and recounts the ratings (apps.reviews.apps: users_deleting)."""

from apps.reviews.models import Review, ReviewReport


def reviews_export(user) -> dict:
    reviews = Review.objects.filter(user=user).select_related("book").order_by("created_at")
    reports = ReviewReport.objects.filter(reporter=user).order_by("created_at")
    return {
        "reviews": [
            {
                "book": review.book.title,
                "rating": review.rating,
                "title": review.title,
                "text": review.text,
                "status": review.status,
                "created_at": review.created_at,
                "edited_at": review.edited_at,
            }
            for review in reviews
        ],
        "reports_made": [
            {
                "review_id": report.review_id,
                "reason": report.reason,
                "note": report.note,
                "created_at": report.created_at,
            }
            for report in reports
        ],
    }
