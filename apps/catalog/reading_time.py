"""Words and reading time, counted from a capsule's rendered prose (never stated by hand).

A word is a whitespace-separated run that holds a letter or a digit; lone punctuation and operators do not count.
A capsule's words are those of its prose, code listings left out and maths read as text
(apps.catalog.selectors.capsule_prose_words): a reader reads the prose, and scans a listing. The reading speed
is one setting, READING_WORDS_PER_MINUTE (200 by default: a technical text read with care, slower than prose's
230-250)."""

import math

from django.conf import settings


def words_count(text: str) -> int:
    return sum(1 for token in text.split() if any(ch.isalnum() for ch in token))


def reading_minutes(words: int) -> int:
    """Whole minutes, rounded up, at least one."""
    return max(1, math.ceil(words / settings.READING_WORDS_PER_MINUTE))
