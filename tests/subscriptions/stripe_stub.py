"""A tiny Stripe stand-in at the HTTP boundary: a real HTTP server that records every request
the official client sends and answers Stripe-shaped JSON. It covers what localstripe lacks
(Prices, Checkout Sessions, Customer Portal sessions) and lets a test decide what Stripe holds
for a subscription, or make a call fail.

It also plays Stripe's hosted pages for the browser journey: GET /pay/<session> completes the
Checkout (creates the subscription, delivers signed webhooks) and redirects to success_url.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import requests

API_VERSION = "2026-10-28.endive"
_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    return f"{prefix}_stub{next(_ids):08d}"


def sign(payload: bytes, secret: str, timestamp: int | None = None) -> str:
    """The Stripe-Signature header exactly as Stripe makes it: t=<unix time>,v1=<HMAC-SHA256 of "t.payload">."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def event_payload(event_type: str, obj: dict, *, event_id: str | None = None, created: int | None = None) -> dict:
    return {
        "id": event_id or new_id("evt"),
        "object": "event",
        "api_version": API_VERSION,
        "created": int(time.time()) if created is None else created,
        "data": {"object": obj},
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None},
        "type": event_type,
    }


def price_object(price_id: str, *, amount: int = 1200, currency: str = "eur", interval: str = "month") -> dict:
    return {
        "id": price_id,
        "object": "price",
        "active": True,
        "currency": currency,
        "unit_amount": amount,
        "recurring": {"interval": interval, "interval_count": 1, "usage_type": "licensed"},
        "type": "recurring",
        "livemode": False,
        "product": "prod_stub",
    }


def subscription_object(
    sub_id: str, *, customer: str, status: str = "active", price: dict | None = None, period_days: float = 30,
    period_end: int | None = None, cancel_at_period_end: bool = False, metadata: dict | None = None, **extra,
) -> dict:  # fmt: skip
    """A subscription as recent API versions shape it (the period lives on the item)."""
    now = int(time.time())
    end = period_end if period_end is not None else now + int(period_days * 86400)
    price = price or price_object("price_monthly_test")
    obj = {
        "id": sub_id,
        "object": "subscription",
        "customer": customer,
        "status": status,
        "cancel_at_period_end": cancel_at_period_end,
        "cancel_at": end if cancel_at_period_end else None,
        "canceled_at": now if cancel_at_period_end or status == "canceled" else None,
        "ended_at": now if status == "canceled" else None,
        "created": now,
        "start_date": now,
        "trial_end": None,
        "livemode": False,
        "metadata": metadata or {},
        "items": {
            "object": "list",
            "data": [
                {
                    "id": sub_id.replace("sub_", "si_"),
                    "object": "subscription_item",
                    "price": price,
                    "quantity": 1,
                    "current_period_start": now,
                    "current_period_end": end,
                }
            ],
            "has_more": False,
        },
    }
    obj.update(extra)
    return obj


@dataclass
class Recorded:
    method: str
    path: str
    query: dict
    form: dict  # flattened form fields as sent, e.g. {"line_items[0][price]": "price_..."}
    headers: dict

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


@dataclass
class StripeStub:
    url: str = ""
    requests: list[Recorded] = field(default_factory=list)
    customers: dict = field(default_factory=dict)
    prices: dict = field(default_factory=dict)
    subscriptions: dict = field(default_factory=dict)
    sessions: dict = field(default_factory=dict)
    # path -> how many of the next requests to it answer 500 (with Stripe-Should-Retry: false)
    failures: dict = field(default_factory=dict)
    # paths answered 401 with the key sent echoed in the message (a careless upstream, for the secrets test)
    echo_key: set = field(default_factory=set)
    webhook_url: str = ""
    portal_cancel_seconds: float = 30 * 86400  # how long a subscription cancelled in the portal has left
    webhook_secret: str = ""
    deliveries: list = field(default_factory=list)
    payment_methods: dict = field(default_factory=dict)
    # The card the next hosted Checkout is paid with: Stripe gives one card number one fingerprint on every customer.
    card_fingerprint: str = "fp_stub_card_4242"

    def reset(self) -> None:
        for name in ("requests", "deliveries"):
            getattr(self, name).clear()
        for name in ("customers", "prices", "subscriptions", "sessions", "failures", "echo_key", "payment_methods"):
            getattr(self, name).clear()
        self.webhook_url = self.webhook_secret = ""
        self.card_fingerprint = "fp_stub_card_4242"
        self.portal_cancel_seconds = 30 * 86400

    def calls(self, method: str, path_pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.fullmatch(path_pattern, r.path)]

    # --- what a test (or the hosted pages) do at "Stripe" -------------------------------------

    def deliver(self, event_type: str, obj: dict, **kwargs) -> requests.Response:
        """Sends a signed event to the registered webhook URL, as Stripe does."""
        event = event_payload(event_type, obj, **kwargs)
        body = json.dumps(event, indent=2).encode()
        response = requests.post(
            self.webhook_url, data=body, timeout=10,
            headers={
                "Content-Type": "application/json; charset=utf-8",
                "Stripe-Signature": sign(body, self.webhook_secret),
            },
        )  # fmt: skip
        self.deliveries.append((event, response.status_code))
        return response

    def complete_checkout(self, session_id: str) -> dict:
        """What Stripe does when the customer pays: a subscription, then its events."""
        session = self.sessions[session_id]
        meta = "subscription_data[metadata]["
        price = self.prices.get(session["line_items[0][price]"]) or price_object(session["line_items[0][price]"])
        method = {"id": new_id("pm"), "object": "payment_method", "type": "card", "customer": session["customer"],
                  "card": {"brand": "visa", "last4": "4242", "fingerprint": self.card_fingerprint}}  # fmt: skip
        self.payment_methods[method["id"]] = method
        trial_days = int(session.get("subscription_data[trial_period_days]") or 0)
        trial = {"status": "trialing", "trial_end": int(time.time()) + trial_days * 86400} if trial_days else {}
        sub = subscription_object(
            new_id("sub"), customer=session["customer"], price=price, default_payment_method=method["id"],
            period_days=trial_days or 30,
            metadata={k[len(meta) : -1]: v for k, v in session.items() if k.startswith(meta)}, **trial,
        )  # fmt: skip
        self.subscriptions[sub["id"]] = sub
        completed = {
            "id": session_id, "object": "checkout.session", "mode": "subscription", "status": "complete",
            "payment_status": "paid", "customer": session["customer"], "subscription": sub["id"],
            "client_reference_id": session.get("client_reference_id"),
        }  # fmt: skip
        if self.webhook_url:
            self.deliver("customer.subscription.created", sub)
            self.deliver("checkout.session.completed", completed)
        return sub

    def schedule_cancel(self, sub_id: str, *, seconds_left: float) -> dict:
        """The reader cancels in the portal: it ends with the period (here, `seconds_left` from now)."""
        sub = self.subscriptions[sub_id]
        end = int(time.time() + seconds_left)
        sub.update(cancel_at_period_end=True, cancel_at=end, canceled_at=int(time.time()))
        sub["items"]["data"][0]["current_period_end"] = end
        if self.webhook_url:
            self.deliver("customer.subscription.updated", sub)
        return sub

    def end_period(self, sub_id: str) -> dict:
        sub = self.subscriptions[sub_id]
        sub.update(status="canceled", ended_at=int(time.time()))
        if self.webhook_url:
            self.deliver("customer.subscription.deleted", sub)
        return sub

    # --- the API -------------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, query: dict, form: dict, api_key: str = ""
    ) -> tuple[int, dict | str, dict]:
        if path in self.echo_key:
            return (
                401,
                {"error": {"type": "invalid_request_error", "message": f"Invalid API Key provided: {api_key}"}},
                {},
            )
        failures = self.failures.get(path, 0)
        if failures:
            self.failures[path] = failures - 1
            return (
                500,
                {"error": {"type": "api_error", "message": "Stub: internal error."}},
                {"Stripe-Should-Retry": "false"},
            )
        if method == "POST" and path == "/v1/customers":
            customer = {"id": new_id("cus"), "object": "customer", "email": form.get("email"), "livemode": False,
                        "metadata": {k[9:-1]: v for k, v in form.items() if k.startswith("metadata[")}}  # fmt: skip
            self.customers[customer["id"]] = customer
            return 200, customer, {}
        if method == "POST" and path == "/v1/checkout/sessions":
            session_id = new_id("cs_test")
            self.sessions[session_id] = dict(form)
            return 200, {
                "id": session_id, "object": "checkout.session", "mode": form.get("mode"), "status": "open",
                "customer": form.get("customer"), "client_reference_id": form.get("client_reference_id"),
                "success_url": form.get("success_url"), "cancel_url": form.get("cancel_url"),
                "url": f"{self.url}/pay/{session_id}", "livemode": False,
            }, {}  # fmt: skip
        if method == "POST" and path == "/v1/billing_portal/sessions":
            session_id = new_id("bps")
            self.sessions[session_id] = dict(form)
            return 200, {"id": session_id, "object": "billing_portal.session", "customer": form.get("customer"),
                         "return_url": form.get("return_url"), "url": f"{self.url}/portal/{session_id}",
                         "livemode": False}, {}  # fmt: skip
        if method == "GET" and (m := re.fullmatch(r"/v1/prices/([^/]+)", path)):
            return self._found(self.prices.get(m[1]), "price", m[1])
        if method == "GET" and (m := re.fullmatch(r"/v1/subscriptions/([^/]+)", path)):
            return self._found(self.subscriptions.get(m[1]), "subscription", m[1])
        if method == "POST" and (m := re.fullmatch(r"/v1/subscriptions/([^/]+)", path)) and m[1] in self.subscriptions:
            return 200, self._subscription_update(self.subscriptions[m[1]], form), {}
        if method == "GET" and (m := re.fullmatch(r"/v1/payment_methods/([^/]+)", path)):
            return self._found(self.payment_methods.get(m[1]), "payment_method", m[1])
        if method == "GET" and path == "/v1/subscriptions":
            data = [s for s in self.subscriptions.values() if query.get("customer") in (None, s["customer"])]
            return 200, {"object": "list", "url": "/v1/subscriptions", "has_more": False, "data": data}, {}
        # Stripe's hosted pages, played for the browser.
        if method == "GET" and (m := re.fullmatch(r"/pay/([^/]+)", path)):
            self.complete_checkout(m[1])
            success = self.sessions[m[1]]["success_url"].replace("{CHECKOUT_SESSION_ID}", m[1])
            return 303, "", {"Location": success}
        if method == "GET" and (m := re.fullmatch(r"/portal/([^/]+)", path)):
            page = (
                "<!DOCTYPE html><html lang=en><title>Billing portal (stand-in)</title>"
                "<h1>Manage your subscription</h1>"
                f"<form method=post action=/portal/{m[1]}/cancel>"
                "<button type=submit>Cancel subscription</button></form>"
                f'<a href="{self.sessions[m[1]]["return_url"]}">Return</a>'
            )
            return 200, page, {"Content-Type": "text/html; charset=utf-8"}
        if method == "POST" and (m := re.fullmatch(r"/portal/([^/]+)/cancel", path)):
            session = self.sessions[m[1]]
            sub = next(
                s
                for s in self.subscriptions.values()
                if s["customer"] == session["customer"] and s["status"] != "canceled"
            )
            self.schedule_cancel(sub["id"], seconds_left=self.portal_cancel_seconds)
            return 303, "", {"Location": session["return_url"]}
        return 404, {"error": {"type": "invalid_request_error", "message": f"Stub: no route {method} {path}"}}, {}

    def _subscription_update(self, sub: dict, form: dict) -> dict:
        """What Stripe does with `trial_end=now`: the trial ends, the first period is billed (paid, here)."""
        if form.get("trial_end") == "now" and sub["status"] == "trialing":
            now = int(time.time())
            sub.update(status="active", trial_end=now)
            sub["items"]["data"][0].update(current_period_start=now, current_period_end=now + 30 * 86400)
            if self.webhook_url:
                self.deliver("customer.subscription.updated", sub)
        return sub

    @staticmethod
    def _found(obj, kind, object_id):
        if obj is None:
            return 404, {"error": {"type": "invalid_request_error", "code": "resource_missing", "param": "id",
                                   "message": f"No such {kind}: '{object_id}'"}}, {}  # fmt: skip
        return 200, obj, {}


def start_stub() -> tuple[StripeStub, ThreadingHTTPServer]:
    stub = StripeStub()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self):
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            form = dict(parse_qsl(body, keep_blank_values=True))
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            stub.requests.append(Recorded(self.command, parts.path, query, form, dict(self.headers.items())))
            api_key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            status, payload, headers = stub.handle(self.command, parts.path, query, form, api_key)
            data = json.dumps(payload).encode() if isinstance(payload, dict) else payload.encode()
            self.send_response(status)
            if "Content-Type" not in headers:
                self.send_header("Content-Type", "application/json")
            self.send_header("Request-Id", new_id("req"))
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = _serve

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return stub, server
