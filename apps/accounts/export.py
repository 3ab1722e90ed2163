"""A reader's own data as one JSON document (the account page's "Download your data"). Each app above accounts
adds its section from its AppConfig.ready, so accounts imports none of them; accounts writes the profile itself.

The document is written piece by piece (account_export_chunks), never built whole: a reader with hundreds of large
kernel submissions made a document of over 100 MB, held in the worker's memory together with its parts. A section
may give any list as an iterator (a QuerySet's `.iterator(chunk_size=...)`), which is read one item at a time."""

from collections.abc import Callable, Iterable, Iterator

from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

# section(user) -> JSON-serialisable data (datetimes allowed: encoded as ISO 8601); lists may be iterators.
AccountExportSection = Callable[..., object]
_sections: dict[str, AccountExportSection] = {}

EXPORT_FORMAT_VERSION = 1
# Written to the response in pieces of about this size: small enough to bound memory, large enough that the server
# does not write a few bytes at a time.
EXPORT_CHUNK_CHARS = 64 * 1024
INDENT = "  "  # as json.dumps(indent=2), which the document was written with before it was streamed
_scalars = DjangoJSONEncoder()


def account_export_register(label: str, section: AccountExportSection) -> None:
    _sections[label] = section


def account_export(user) -> dict:
    """The document's sections, each computed only when the document is written."""
    from allauth.account.models import EmailAddress
    from allauth.socialaccount.models import SocialAccount

    data = {
        "format_version": EXPORT_FORMAT_VERSION,
        "exported_at": timezone.now(),
        "profile": {
            "email": user.email,
            "public_name": user.name,
            "shown_to_other_readers_as": user.display_name,
            "date_joined": user.date_joined,
            "last_login": user.last_login,
            "email_addresses": list(
                EmailAddress.objects.filter(user=user).order_by("email").values("email", "verified", "primary")
            ),
            "linked_accounts": list(
                SocialAccount.objects.filter(user=user).order_by("provider").values("provider", "uid", "date_joined")
            ),
        },
    }
    for label in sorted(_sections):
        data[label] = _Later(_sections[label], user)
    return data


def account_export_chunks(user) -> Iterator[str]:
    """The reader's document as JSON text, in pieces of about EXPORT_CHUNK_CHARS."""
    pending: list[str] = []
    size = 0
    for piece in json_chunks(account_export(user)):
        pending.append(piece)
        size += len(piece)
        if size >= EXPORT_CHUNK_CHARS:
            yield "".join(pending)
            pending, size = [], 0
    if pending:
        yield "".join(pending)


class _Later:
    """A section, read when the writer reaches it (so that one section's rows are gone before the next is read)."""

    def __init__(self, section: AccountExportSection, user):
        self.section, self.user = section, user


def json_chunks(value, level: int = 0) -> Iterator[str]:
    """`value` as the text json.dumps(value, indent=2, cls=DjangoJSONEncoder) gives, in pieces; lists may be any
    iterable, read once."""
    if isinstance(value, _Later):
        value = value.section(value.user)
    if isinstance(value, dict):
        yield from _container("{", "}", ((key, item) for key, item in value.items()), level)
    elif isinstance(value, Iterable) and not isinstance(value, str | bytes):
        yield from _container("[", "]", ((None, item) for item in value), level)
    else:
        yield _scalars.encode(value)


def _container(opening: str, closing: str, entries: Iterator, level: int) -> Iterator[str]:
    inner = "\n" + INDENT * (level + 1)
    empty = True
    for key, item in entries:
        prefix = opening + inner if empty else "," + inner
        empty = False
        yield prefix if key is None else f"{prefix}{_scalars.encode(str(key))}: "
        yield from json_chunks(item, level + 1)
    yield opening + closing if empty else "\n" + INDENT * level + closing
