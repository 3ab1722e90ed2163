"""A reader's own data as one JSON document (the account page's "Download your data"). Each app above accounts
adds its section from its AppConfig.ready, so accounts imports none of them; accounts writes the profile itself."""

from collections.abc import Callable

from django.utils import timezone

# section(user) -> JSON-serialisable data (datetimes allowed: the view encodes them as ISO 8601)
AccountExportSection = Callable[..., object]
_sections: dict[str, AccountExportSection] = {}

EXPORT_FORMAT_VERSION = 1


def account_export_register(label: str, section: AccountExportSection) -> None:
    _sections[label] = section


def account_export(user) -> dict:
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
        data[label] = _sections[label](user)
    return data
