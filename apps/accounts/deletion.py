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


# A notice tells a reader asking to delete their own account what else the deletion ends at once (a sentence), or
# None; the reader confirms each before the deletion goes ahead. Registered by the apps above (subscriptions: a
# running subscription is cancelled immediately).
AccountDeletionNotice = Callable[[models.Model], str | None]
_notices: list[AccountDeletionNotice] = []


def account_deletion_notice_register(notice: AccountDeletionNotice) -> None:
    if notice not in _notices:
        _notices.append(notice)


def account_deletion_notices(user) -> list[str]:
    return [text for notice in _notices if (text := notice(user))]


# A closer ends what the reader has outside this database (subscriptions: their Stripe customer, its open Checkout
# Sessions and subscriptions) before anything here is deleted. It answers None once done, or a sentence saying why it
# cannot be done now: the deletion is then refused and nothing is deleted. Closers must be idempotent, since a refused
# deletion is tried again.
AccountDeletionCloser = Callable[[models.Model], str | None]
_closers: list[AccountDeletionCloser] = []


def account_deletion_closer_register(closer: AccountDeletionCloser) -> None:
    if closer not in _closers:
        _closers.append(closer)


def account_deletion_close(user) -> list[str]:
    """Runs the closers in order of registration; stops at the first that cannot close, with its reason."""
    for closer in _closers:
        if reason := closer(user):
            return [reason]
    return []
