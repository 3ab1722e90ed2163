"""Presentation of reviews: the name and initials shown, relative dates, star rows."""

from datetime import datetime

from django import template
from django.utils import timezone

from apps.accounts.selectors import public_name
from apps.reviews.models import STARS, ReviewReport

register = template.Library()


@register.filter
def reviewer_name(user) -> str:
    """The reader's public name or anonymous handle, never the email address (not even its local part)."""
    return public_name(user)


@register.filter
def initials(user) -> str:
    """First letters of the first and last words of the name shown: "Jonas Bergström" -> "JB"."""
    words = reviewer_name(user).split()
    letters = [words[0][0]] + ([words[-1][0]] if len(words) > 1 else [])
    return "".join(letters).upper()


@register.filter
def relative_date(value: datetime, now: datetime | None = None) -> str:
    """Dates as the original page wrote them: "today", "yesterday", "3 days ago", "last week",
    "2 weeks ago", "last month", "5 months ago", "last year", "2 years ago"."""
    if not value:
        return ""
    now = now or timezone.now()
    days = (timezone.localdate(now) - timezone.localdate(value)).days
    if days <= 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days < 7:
        return f"{days} days ago"
    if days < 14:
        return "last week"
    if days < 30:
        return f"{days // 7} weeks ago"
    months = days * 12 // 365
    if months < 2:
        return "last month"
    if months < 12:
        return f"{months} months ago"
    years = days // 365
    return "last year" if years < 2 else f"{years} years ago"


@register.simple_tag
def report_reasons():
    return ReviewReport.Reason.choices


@register.inclusion_tag("reviews/_stars.html")
def star_row(rating, size="small"):
    """A row of five stars filled up to `rating` (a number, possibly fractional), for the eye only:
    callers give the text ("4.8 out of 5") beside it."""
    rating = float(rating or 0)
    return {"stars": [max(0.0, min(1.0, rating - (n - 1))) * 100 for n in STARS], "size": size}


@register.filter
def thousands(value) -> str:
    """1204 -> "1,204"."""
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return ""


@register.filter
def star_bars(rating):
    """The 5-to-1 distribution of a BookRating, for _summary.html."""
    from apps.reviews.selectors import star_distribution

    return star_distribution(rating)
