from django import template
from django.conf import settings
from django.utils import timezone
from django.utils.timesince import timesince

from apps.catalog import badges

register = template.Library()


@register.filter
def get_item(mapping, key):
    """`{{ progress|get_item:capsule.id }}`: look up a dict built by a selector."""
    return mapping.get(key) if mapping else None


@register.filter
def figure_badge(badge) -> bool:
    """A percentage badge: the book's measured figure (apps.catalog.badges), not a topic tag."""
    return badges.is_figure_badge(badge)


@register.filter
def has_figure_badges(parts) -> bool:
    """Whether any capsule of these parts carries a percentage badge, so the page needs the legend."""
    return any(badges.is_figure_badge(c.badge) for part in parts for c in part.published_capsules)


@register.simple_tag
def figure_badge_description() -> str:
    return badges.figure_badge_description()


@register.simple_tag
def book_figure_gpu() -> str:
    return badges.BOOK_FIGURE_GPU


@register.filter
def thousands(number) -> str:
    """51234 -> "51,234" (the book's figures are in English whatever the reader's locale)."""
    return f"{int(number):,}"


@register.filter
def ago(moment) -> str:
    """ "just now" under a minute (Django's timesince says "0 minutes"), else "5 minutes ago", "2 days, 3 hours ago"."""
    if not moment:
        return ""
    if (timezone.now() - moment).total_seconds() < 60:
        return "just now"
    return f"{timesince(moment)} ago"


@register.simple_tag
def words_per_minute() -> int:
    """The reading speed that every stated reading time uses (READING_WORDS_PER_MINUTE)."""
    return settings.READING_WORDS_PER_MINUTE
