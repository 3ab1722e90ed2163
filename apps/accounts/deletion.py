"""Deleting readers, for the apps above accounts. They join in from their AppConfig.ready, so
accounts imports none of them."""

from collections.abc import Callable

from django.db import models
from django.dispatch import Signal

# Sent by services.users_delete inside its transaction, before the accounts' rows go, with `users`
# (a QuerySet of User). Receivers run in that transaction: an error in one rolls the deletion back.
users_deleting = Signal()

_account_content: set[type[models.Model]] = set()


def account_content_register(model: type[models.Model]) -> None:
    """`model`'s rows are a reader's own and go with their account, even when the staff member
    deleting it may not delete such rows one by one (moderators hide reviews, they never delete them)."""
    _account_content.add(model)


def account_content_names() -> set[str]:
    """The registered models' verbose names, as admin lists the permissions a deletion needs."""
    return {str(model._meta.verbose_name) for model in _account_content}


# A blocker answers, for a reader asking to delete their own account, why it cannot be done now (a sentence that
# says what to do), or None. Registered by the apps above (subscriptions: a subscription Stripe still bills).
AccountDeletionBlocker = Callable[[models.Model], str | None]
_blockers: list[AccountDeletionBlocker] = []


def account_deletion_blocker_register(blocker: AccountDeletionBlocker) -> None:
    if blocker not in _blockers:
        _blockers.append(blocker)


def account_deletion_blockers(user) -> list[str]:
    return [reason for blocker in _blockers if (reason := blocker(user))]
