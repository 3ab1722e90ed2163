"""Writes: keyword-only `<noun>_<verb>` services, atomic where they write (ARCHITECTURE.md, convention 4).
One module per topic; callers import the names from this package:

- `checkout`: Checkout and Customer Portal sessions, and the reader's Stripe customer;
- `events`: webhook events verified, stored once and applied (a table of handlers by event type);
- `sync`: the subscription mirror, re-read from the Stripe API;
- `emails`: emails that follow changes of a subscription's stored state;
- `complimentary`: complimentary access granted, revoked (or deleted) by staff;
- `entitlement`: each reader's access window, bounded, stored on the reader whenever the two above change it (its
  only writer);
- `trials`: one free trial per reader and per card;
- `reconcile`: the daily re-read from Stripe of what may have been missed, and the dead letters mailed.
- `standin_pages` (test mode only, imported by its views): what Stripe's hosted Checkout and Portal pages do,
  done against the local stand-in (`manage.py stripe_test_server`).

The rule that keeps access right whatever Stripe's asynchronous world does: a webhook event is
only a hint. It is stored once, and processing it re-reads the subscription from the Stripe API
and stores that current state (`subscription_sync`), so events that arrive twice, late or out
of order all converge on what Stripe holds now.
"""

from apps.subscriptions.services.checkout import (
    checkout_session_create,
    customer_ensure,
    plan_price_id,
    portal_session_create,
)
from apps.subscriptions.services.complimentary import (
    complimentary_access_change,
    complimentary_access_delete,
    complimentary_access_grant,
    complimentary_access_revoke,
)
from apps.subscriptions.services.emails import EmailKind, subscription_email_send
from apps.subscriptions.services.entitlement import (
    entitlement_refresh,
    entitlements_refresh_all,
    subscription_gives_access,
)
from apps.subscriptions.services.events import (
    EVENT_HANDLERS,
    HANDLED_EVENT_TYPES,
    event_process,
    event_record,
    event_replay,
    event_verify,
    events_retry_unprocessed,
)
from apps.subscriptions.services.reconcile import ReconcileReport, dead_letters_notify, subscriptions_reconcile
from apps.subscriptions.services.sync import (
    SyncReport,
    customer_link,
    customer_sync,
    subscription_store,
    subscription_sync,
    subscriptions_sync_all,
)

__all__ = [
    "EVENT_HANDLERS",
    "HANDLED_EVENT_TYPES",
    "EmailKind",
    "ReconcileReport",
    "SyncReport",
    "checkout_session_create",
    "complimentary_access_change",
    "complimentary_access_delete",
    "complimentary_access_grant",
    "complimentary_access_revoke",
    "customer_ensure",
    "customer_link",
    "customer_sync",
    "dead_letters_notify",
    "entitlement_refresh",
    "entitlements_refresh_all",
    "event_process",
    "event_record",
    "event_replay",
    "event_verify",
    "events_retry_unprocessed",
    "plan_price_id",
    "portal_session_create",
    "subscription_email_send",
    "subscription_gives_access",
    "subscription_store",
    "subscription_sync",
    "subscriptions_reconcile",
    "subscriptions_sync_all",
]
