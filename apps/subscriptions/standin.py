"""The Stripe stand-in of test mode: localstripe (a stateful Stripe API for customers, plans, subscriptions,
invoices and signed webhooks) with what the site uses and localstripe lacks, added in this process:

- `GET /v1/prices/{id}`: a localstripe Plan read as a Price (Stripe's Plans and Prices share their ids);
- `POST/GET /v1/checkout/sessions[/{id}]`: Checkout Sessions in subscription mode, whose `url` is the site's own
  test-mode checkout page (Stripe's hosted page does not exist here), listed by customer and status, and expired
  (`POST /v1/checkout/sessions/{id}/expire`, as a deleted account expires its reader's open sessions);
- `POST /v1/billing_portal/sessions`: Portal sessions whose `url` is the site's test-mode portal page;
- `customer.subscription.updated` on every update of a subscription (localstripe sends none), and the end of a
  period: a subscription set to cancel at period end is cancelled then (`customer.subscription.deleted`), any
  other is renewed (a new invoice, paid with the customer's card);
- test helpers, which Stripe has no equivalent of under these names and which only the site's test-mode pages
  call: complete or expire a Checkout Session with a test card, read a Portal session, and move a subscription's
  clock to a few seconds before the end of its period (as Stripe's test clocks do) instead of waiting a month.

Run by `manage.py stripe_test_server` (make run starts it); never imported by the web or worker processes, so
localstripe stays a development dependency. State is kept in one pickle file under VAR_DIR between runs, so that
the customers and subscriptions stored by the site still exist at the stand-in after a restart.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web
from localstripe import resources, server, webhooks
from localstripe.errors import UserError
from localstripe.resources import Customer, Event, PaymentMethod, Plan, Subscription, SubscriptionItem, store

logger = logging.getLogger(__name__)

# The session id goes into the success URL where Stripe would put it.
SESSION_ID_PLACEHOLDER = "{CHECKOUT_SESSION_ID}"
PERIOD_SWEEP_INTERVAL_S = 1.0
WEBHOOK_ID = "kernel-engineering"


@dataclass(frozen=True)
class StandInConfig:
    site_url: str  # where the test-mode pages and the webhook are: http://127.0.0.1:PORT
    webhook_path: str  # /stripe/webhook/
    webhook_secret: str
    webhook_events: list[str]
    plans: list[dict]  # {"id", "amount", "currency", "interval"} for each offered Price
    state_file: Path | None  # None: nothing kept between runs


class CheckoutSession(resources.StripeObject):
    """A Checkout Session in subscription mode, as much of it as the site sends and reads."""

    object = "checkout.session"
    _id_prefix = "cs_test_"

    def __init__(self, *, site_url: str, **params):
        line_items = params.get("line_items") or []
        price = (line_items[0] if line_items else {}).get("price")
        customer = params.get("customer")
        if params.get("mode") != "subscription" or not isinstance(price, str) or not isinstance(customer, str):
            raise UserError(400, "This stand-in offers Checkout in subscription mode, for one Price and a customer.")
        Customer._api_retrieve(customer)  # 404 if unknown
        Plan._api_retrieve(price)
        super().__init__()
        self.mode = "subscription"
        self.status = "open"
        self.payment_status = "unpaid"
        self.customer = customer
        self.client_reference_id = params.get("client_reference_id")
        self.metadata = params.get("metadata") or {}
        self.success_url = params.get("success_url") or ""
        self.cancel_url = params.get("cancel_url") or ""
        self.allow_promotion_codes = str(params.get("allow_promotion_codes", "")).lower() == "true"
        self.line_items = {"object": "list", "data": [{"price": price, "quantity": 1}]}
        self.subscription = None
        self._subscription_data = params.get("subscription_data") or {}
        # On the host the reader is on (the one the site gave Stripe to return to), so their session cookie holds.
        self.url = f"{_origin(self.success_url, site_url)}/billing/test-mode/checkout/{self.id}/"

    def _complete(self, card_number: str) -> None:
        """Pays as Stripe's hosted page would: the card becomes the customer's default, the subscription starts
        (charged now, or trialing), and `checkout.session.completed` goes out."""
        if self.status != "open":
            raise UserError(400, f"This Checkout Session is {self.status}.")
        card = PaymentMethod(
            type="card", card={"number": card_number, "exp_month": "12", "exp_year": "2034", "cvc": "123"}
        )
        PaymentMethod._api_attach(card.id, customer=self.customer)
        Customer._api_update(self.customer, invoice_settings={"default_payment_method": card.id})
        params = {
            "customer": self.customer,
            "items": [{"plan": self.line_items["data"][0]["price"]}],
            "metadata": self._subscription_data.get("metadata") or {},
            # As Checkout does: a declined card leaves no subscription behind; the reader tries another.
            "payment_behavior": "error_if_incomplete",
        }
        trial_days = int(self._subscription_data.get("trial_period_days") or 0)
        if trial_days > 0:
            params["trial_end"] = int(time.time()) + trial_days * 24 * 60 * 60
        subscription = Subscription(**params)
        if subscription.trial_end and subscription.status == "incomplete":
            subscription.status = "trialing"  # localstripe leaves a trial `incomplete`: Stripe says trialing
        elif subscription.status != "active":
            # The first payment failed: Checkout says so and stays open for another card; the subscription that
            # localstripe left behind gives nothing (as Stripe's would, once expired).
            subscription.status = "incomplete_expired"
            store["subscription:" + subscription.id] = subscription
            webhooks.schedule_webhook(Event("customer.subscription.updated", subscription))
            raise UserError(402, "Your card was declined.", {"code": "card_declined"})
        self.subscription = subscription.id
        self.status = "complete"
        self.payment_status = "no_payment_required" if trial_days > 0 else "paid"
        self.success_url = self.success_url.replace(SESSION_ID_PLACEHOLDER, self.id)
        store[self.object + ":" + self.id] = self  # saved
        webhooks.schedule_webhook(Event("checkout.session.completed", self))

    def _expire(self) -> None:
        if self.status == "open":
            self.status = "expired"
            store[self.object + ":" + self.id] = self


class PortalSession(resources.StripeObject):
    object = "billing_portal.session"
    _id_prefix = "bps_"

    def __init__(self, *, site_url: str, customer=None, return_url=None, **_ignored):
        if not isinstance(customer, str):
            raise UserError(400, "A Portal session needs a customer.")
        Customer._api_retrieve(customer)
        super().__init__()
        self.customer = customer
        self.return_url = return_url or site_url + "/"
        self.url = f"{_origin(self.return_url, site_url)}/billing/test-mode/portal/{self.id}/"


def _origin(url: str, default: str) -> str:
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else default


def price_from_plan(plan) -> dict:
    """A localstripe Plan in the shape of a Stripe Price (what `stripe_api.price_retrieve` reads)."""
    return {
        "id": plan.id,
        "object": "price",
        "active": plan.active,
        "currency": plan.currency,
        "unit_amount": plan.amount,
        "type": "recurring",
        "recurring": {"interval": plan.interval, "interval_count": plan.interval_count, "usage_type": "licensed"},
        "product": plan.product,
        "nickname": plan.nickname,
        "metadata": plan.metadata or {},
        "livemode": False,
        "created": plan.created,
    }


# --- Subscriptions: `updated` events and the end of a period -------------------------------------------------

_localstripe_update = resources.StripeObject._api_update.__func__
_localstripe_current_period = SubscriptionItem._current_period


def _subscription_update(cls, id, **data):
    subscription = _localstripe_update(cls, id, **data)
    webhooks.schedule_webhook(Event("customer.subscription.updated", subscription))
    return subscription


def _current_period(self):
    """localstripe counts one interval from the start date; a moved clock ends the period earlier."""
    period = _localstripe_current_period(self)
    subscription = store.get("subscription:" + self._subscription) if self._subscription else None
    period_end = getattr(subscription, "_test_clock_period_end", None)
    if period_end is not None:
        period = {"start": period["start"], "end": period_end}
    return period


def advance_clock(subscription_id: str, seconds_left: int) -> Subscription:
    """Brings the end of the subscription's current period to `seconds_left` from now."""
    subscription = Subscription._api_retrieve(subscription_id)
    if subscription.status not in ("active", "trialing", "past_due"):
        raise UserError(400, f"This subscription is {subscription.status}.")
    subscription._test_clock_period_end = int(time.time()) + max(0, int(seconds_left))
    store["subscription:" + subscription.id] = subscription
    webhooks.schedule_webhook(Event("customer.subscription.updated", subscription))
    return subscription


def end_due_periods(now: float | None = None) -> list[str]:
    """What Stripe does when a period ends: a subscription set to cancel then is cancelled; any other is renewed
    for one more interval and invoiced. Returns the ids of the subscriptions that changed."""
    now = time.time() if now is None else now
    changed = []
    for key, subscription in list(store.items()):
        if not key.startswith("subscription:") or subscription.status not in ("active", "trialing", "past_due"):
            continue
        if subscription.current_period_end > now:
            continue
        if subscription.cancel_at_period_end:
            Subscription._api_delete(subscription.id)  # status canceled, ended_at, `deleted` event
        else:
            subscription.start_date = subscription.current_period_end
            subscription._test_clock_period_end = None
            subscription._create_invoice()
            webhooks.schedule_webhook(Event("customer.subscription.updated", subscription))
        store[key] = subscription
        changed.append(subscription.id)
    return changed


async def _sweep_periods(app: web.Application) -> None:
    while True:
        try:
            end_due_periods()
        except Exception:  # one bad object must not stop the clock for the others
            logger.exception("The stand-in could not end a period")
        await asyncio.sleep(PERIOD_SWEEP_INTERVAL_S)


# --- HTTP -----------------------------------------------------------------------------------------------------


def _json(obj) -> web.Response:
    return server.json_response(obj._export() if hasattr(obj, "_export") else obj)


def build_app(config: StandInConfig) -> web.Application:
    """localstripe's application with the routes above, the site's webhook and Prices, and the period clock."""
    Subscription._api_update = classmethod(_subscription_update)
    SubscriptionItem._current_period = _current_period
    _keep_state_in(config.state_file)

    async def get_price(request):
        return _json(price_from_plan(Plan._api_retrieve(request.match_info["id"])))

    async def create_checkout_session(request):
        params = await server.get_post_data(request) or {}
        return _json(CheckoutSession(site_url=config.site_url, **params))

    async def get_checkout_session(request):
        return _json(CheckoutSession._api_retrieve(request.match_info["id"]))

    async def list_checkout_sessions(request):
        customer, status = request.query.get("customer"), request.query.get("status")
        sessions = [
            session._export()
            for key, session in store.items()
            if key.startswith(CheckoutSession.object + ":")
            and customer in (None, session.customer)
            and status in (None, session.status)
        ]
        return _json({"object": "list", "url": "/v1/checkout/sessions", "has_more": False, "data": sessions})

    async def complete_checkout_session(request):
        params = await server.get_post_data(request) or {}
        session = CheckoutSession._api_retrieve(request.match_info["id"])
        session._complete(str(params.get("card_number") or ""))
        return _json(session)

    async def expire_checkout_session(request):
        session = CheckoutSession._api_retrieve(request.match_info["id"])
        session._expire()
        return _json(session)

    async def create_portal_session(request):
        params = await server.get_post_data(request) or {}
        return _json(PortalSession(site_url=config.site_url, **params))

    async def get_portal_session(request):
        return _json(PortalSession._api_retrieve(request.match_info["id"]))

    async def advance_subscription_clock(request):
        params = await server.get_post_data(request) or {}
        return _json(advance_clock(request.match_info["id"], int(params.get("seconds_left") or 0)))

    async def on_startup(app):
        for plan in config.plans:
            try:
                Plan._api_retrieve(plan["id"])
            except UserError:
                Plan(product={"name": "Kernel Engineering (test mode)"}, **plan)
        webhooks.register_webhook(
            WEBHOOK_ID, config.site_url + config.webhook_path, config.webhook_secret, list(config.webhook_events)
        )
        app["period_sweeper"] = asyncio.ensure_future(_sweep_periods(app))

    async def on_cleanup(app):
        app["period_sweeper"].cancel()

    app = server.app
    router = app.router
    router.add_get("/v1/prices/{id}", get_price)
    router.add_post("/v1/checkout/sessions", create_checkout_session)
    router.add_get("/v1/checkout/sessions", list_checkout_sessions)
    router.add_get("/v1/checkout/sessions/{id}", get_checkout_session)
    router.add_post("/v1/checkout/sessions/{id}/expire", expire_checkout_session)  # Stripe's own route
    router.add_post("/v1/test_helpers/checkout/sessions/{id}/complete", complete_checkout_session)
    router.add_post("/v1/test_helpers/checkout/sessions/{id}/expire", expire_checkout_session)
    router.add_post("/v1/billing_portal/sessions", create_portal_session)
    router.add_get("/v1/test_helpers/billing_portal/sessions/{id}", get_portal_session)
    router.add_post("/v1/test_helpers/subscriptions/{id}/advance_clock", advance_subscription_clock)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    return app


def _keep_state_in(path: Path | None) -> None:
    """localstripe pickles its whole store to /tmp/localstripe.pickle after every write, a file that every
    localstripe on the machine shares; this one keeps its own file (or none)."""

    def dump() -> None:
        if path is None:
            return
        partial = path.with_suffix(".partial")
        with open(partial, "wb") as handle:
            pickle.dump(dict(store), handle, protocol=pickle.HIGHEST_PROTOCOL)
        partial.replace(path)  # never a half-written file

    store.dump_to_disk = dump
    store.try_load_from_disk = lambda: None
    if path is not None and path.exists():
        try:
            with open(path, "rb") as handle:
                dict.update(store, pickle.load(handle))
        except Exception:  # a file from another localstripe version: start afresh rather than not at all
            logger.warning("The stand-in's state in %s could not be read; starting empty.", path)


def serve(config: StandInConfig, *, host: str, port: int) -> None:
    app = build_app(config)
    try:
        web.run_app(app, host=host, port=port, print=None, access_log=None)
    except RuntimeError as error:
        # Ctrl-C in `make run` reaches the whole process group, then make's stop() sends TERM: the second signal stops
        # aiohttp's loop in the middle of its own shutdown. Stopping was asked for twice; that is no error.
        if "Event loop stopped before Future completed" not in str(error):
            raise
