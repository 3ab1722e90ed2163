"""Complimentary access: granted, changed, revoked (or deleted) by staff in admin, with a reason; no Stripe involved.
Each write recomputes the reader's stored access in its transaction."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.subscriptions.models import ComplimentaryAccess
from apps.subscriptions.services.entitlement import entitlement_refresh


def complimentary_access_grant(
    *, user, reason: str, ends_at: datetime | None = None, granted_by=None, starts_at: datetime | None = None
) -> ComplimentaryAccess:
    reason = (reason or "").strip()
    if not reason:
        raise ValueError("Complimentary access needs a reason.")
    starts_at = starts_at or timezone.now()
    if ends_at is not None and ends_at <= starts_at:
        raise ValueError("The end date must come after the start.")
    with transaction.atomic():
        access = ComplimentaryAccess.objects.create(
            user=user, reason=reason, starts_at=starts_at, ends_at=ends_at, granted_by=granted_by
        )
        entitlement_refresh(user_id=user.pk)
    return access


def complimentary_access_change(*, access: ComplimentaryAccess) -> ComplimentaryAccess:
    """Saves an edited grant (admin: its start, end or reason) and the reader's entitlement with it."""
    with transaction.atomic():
        access.save()
        entitlement_refresh(user_id=access.user_id)
    return access


def complimentary_access_revoke(*, access: ComplimentaryAccess, revoked_by=None) -> ComplimentaryAccess:
    if access.revoked_at is None:
        with transaction.atomic():
            access.revoked_at = timezone.now()
            access.revoked_by = revoked_by
            access.save(update_fields=["revoked_at", "revoked_by"])
            entitlement_refresh(user_id=access.user_id)
    return access


def complimentary_access_delete(*, accesses) -> int:
    """Deletes grants (admin's delete page and its bulk action) and recomputes their readers' access with them, so
    that a deleted grant gives nothing from then on; returns how many went. Revoking keeps the record: prefer it."""
    with transaction.atomic():
        user_ids = sorted(set(accesses.values_list("user_id", flat=True)))
        deleted, _ = ComplimentaryAccess.objects.filter(pk__in=list(accesses.values_list("pk", flat=True))).delete()
        for user_id in user_ids:
            entitlement_refresh(user_id=user_id)
    return deleted


def complimentary_access_deleted(sender, instance, **kwargs) -> None:
    """post_delete of a grant, whatever deleted it (a shell, a cascade): its reader's access is recomputed once the
    deletion is committed (by then a reader deleted with their grants is gone, and there is nothing to do)."""
    transaction.on_commit(lambda: entitlement_refresh(user_id=instance.user_id))
