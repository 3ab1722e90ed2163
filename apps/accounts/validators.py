"""Rules for the public name a reader chooses (apps.accounts.selectors.public_name shows it)."""

import re
import unicodedata

from django.core.exceptions import ValidationError

PUBLIC_NAME_MAX_CHARS = 50

# Something@something.tld anywhere in the name: a public name must not publish an address.
_EMAIL_LIKE = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+")
# The form of the anonymous handles: a chosen name must not pass for another reader's handle.
_HANDLE_LIKE = re.compile(r"reader\s*#?\s*\d+", re.IGNORECASE)
# Bidirectional overrides and isolates reorder the text around them (a name that reads backwards,
# or makes a neighbouring cell read differently); other format characters (zero-width joiners)
# are part of some scripts and emoji, and are kept.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Letters of other scripts drawn like the Latin letters of "reader" and "a reader" (and their capitals), which NFKC
# leaves alone: "Rеader 4821" with a Cyrillic е read as a handle. Fullwidth and styled forms (ｒ, ℝ) are NFKC's.
_LOOKALIKES = str.maketrans(
    {
        "а": "a", "ɑ": "a", "α": "a", "е": "e", "ё": "e", "ε": "e", "ɛ": "e", "ԁ": "d", "ɗ": "d", "ɖ": "d",
        "г": "r", "ʀ": "r", "ɾ": "r", "ᴦ": "r", "ⲅ": "r", "о": "o", "ο": "o", "і": "i", "ӏ": "l", "Ӏ": "l",
        "ı": "i", "ꭱ": "r", "ᴅ": "d", "ᴇ": "e", "ᴀ": "a",
    }
)  # fmt: skip


def public_name_clean(value: str) -> str:
    """Runs of whitespace become one space, ends trimmed: what is stored and shown."""
    return " ".join((value or "").split())


def _skeleton(name: str) -> str:
    """The name as it looks: compatibility forms folded (fullwidth, styled letters, other digits stay digits for \\d),
    case folded, look-alike letters of other scripts made Latin, invisible format characters (zero-width) dropped."""
    folded = unicodedata.normalize("NFKC", name).casefold().translate(_LOOKALIKES)
    visible = "".join(c for c in folded if unicodedata.category(c) != "Cf")
    return " ".join(visible.split())


def validate_public_name(value: str) -> None:
    name = public_name_clean(value)
    if len(name) > PUBLIC_NAME_MAX_CHARS:
        raise ValidationError(
            f"Keep your name to {PUBLIC_NAME_MAX_CHARS} characters (it has {len(name)}).", code="max_length"
        )
    if any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in BIDI_CONTROLS for c in value):
        raise ValidationError("Your name contains control characters; use letters, digits and punctuation.")
    if _EMAIL_LIKE.search(name):
        raise ValidationError("Your name is shown to other readers: leave email addresses out of it.", code="email")
    looks_like = _skeleton(name)
    if _HANDLE_LIKE.fullmatch(name) or _HANDLE_LIKE.fullmatch(looks_like) or looks_like == "a reader":
        raise ValidationError(
            'Names like "Reader 1234" are the handles of readers who chose no name; choose another.', code="handle"
        )
