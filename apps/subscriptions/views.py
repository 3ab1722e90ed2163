import logging
import time
from urllib.parse import quote

import stripe
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from apps.subscriptions import selectors, services
from apps.subscriptions.errors import (
    AlreadySubscribed,
    CardDeclined,
    NoBillingAccount,
    NotInTestMode,
    StripeNotConfigured,
    UnknownPlan,
    WebhookRejected,
)
from apps.subscriptions.services import standin_pages
from config.caching import public_when_anonymous

logger = logging.getLogger(__name__)

STRIPE_UNREACHABLE = "We could not reach our payment provider. Nothing was charged; please try again in a minute."
# When this reader last went to Stripe Checkout (in their session): the success page waits for a confirmation only
# then, and only for so long. Stripe expires an unpaid Checkout Session after 24 hours.
CHECKOUT_STARTED_KEY = "subscriptions:checkout_started_at"
CHECKOUT_PENDING_S = 24 * 60 * 60
# How long the success page polls before it says that the confirmation is late (it usually takes seconds).
CONFIRMATION_WAIT_S = 3 * 60
_unconfigured_logged = False


def _safe_next(request, value: str | None) -> str:
    """A path on this site to return to after subscribing (the capsule that was locked), or ""."""
    if (
        value
        and value.startswith("/")
        and url_has_allowed_host_and_scheme(
            value, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return value
    return ""


class _SeeOther(HttpResponseRedirect):
    """303: after a POST the browser follows with a GET (to Stripe's pages)."""

    status_code = 303


def _log_unconfigured_once() -> None:
    """What an operator must set goes to the log (and the README), never to the public pricing page."""
    global _unconfigured_logged
    if _unconfigured_logged:
        return
    _unconfigured_logged = True
    missing = [
        name
        for name in ("STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "STRIPE_PRICE_MONTHLY", "STRIPE_PRICE_YEARLY")
        if not getattr(settings, name)
    ]
    logger.warning(
        "Stripe is not configured, so /pricing/ offers no plan. Missing: %s (README: Configuration, Stripe).",
        ", ".join(missing) or "a price",
    )


@require_safe
@public_when_anonymous
def pricing(request):
    configured = selectors.stripe_is_configured()
    if not configured:
        _log_unconfigured_once()
    return render(
        request,
        "subscriptions/pricing.html",
        {
            "plans": selectors.pricing_plans(),
            "stripe_configured": configured,
            "trial_days": selectors.trial_days_offered(request.user),
            "has_subscriber_access": selectors.has_subscriber_access(request.user),
            "next": _safe_next(request, request.GET.get("next")),
        },
    )


@login_required
def checkout(request):
    if request.method != "POST":
        return redirect("subscriptions:pricing")  # e.g. back from the sign-in page
    success_url = (
        request.build_absolute_uri(reverse("subscriptions:checkout-success")) + "?session_id={CHECKOUT_SESSION_ID}"
    )
    if next_url := _safe_next(request, request.POST.get("next")):
        success_url += "&next=" + quote(next_url, safe="/")
    try:
        url = services.checkout_session_create(
            user=request.user,
            plan=request.POST.get("plan", ""),
            success_url=success_url,
            cancel_url=request.build_absolute_uri(reverse("subscriptions:checkout-cancel")),
            terms_url=request.build_absolute_uri(reverse("pages:terms")),
        )
    except AlreadySubscribed as exc:
        messages.info(request, str(exc))
        return _SeeOther(reverse("accounts:profile"))
    except (UnknownPlan, StripeNotConfigured):
        messages.error(request, "That plan is not available.")
        return _SeeOther(reverse("subscriptions:pricing"))
    except stripe.StripeError as exc:
        logger.error("Stripe Checkout Session failed: %s (%s)", type(exc).__name__, getattr(exc, "code", None) or "")
        messages.error(request, STRIPE_UNREACHABLE)
        return _SeeOther(reverse("subscriptions:pricing"))
    request.session[CHECKOUT_STARTED_KEY] = int(time.time())
    return _SeeOther(url)


def _access_status_context(request, *, waiting_since: int) -> dict:
    """What the success page and its polled fragment show: access (from the stored state only), or a checkout of
    this reader's still waiting for Stripe's confirmation (polled until CONFIRMATION_WAIT_S has passed), or none."""
    has_access = selectors.has_subscriber_access(request.user)
    started = request.session.get(CHECKOUT_STARTED_KEY)
    now = int(time.time())
    pending = not has_access and isinstance(started, int) and now - started < CHECKOUT_PENDING_S
    if has_access:
        request.session.pop(CHECKOUT_STARTED_KEY, None)
    return {
        "has_subscriber_access": has_access,
        "checkout_pending": pending,
        "waiting_since": waiting_since,
        "still_polling": pending and now - waiting_since < CONFIRMATION_WAIT_S,
        "next": _safe_next(request, request.GET.get("next")),
    }


@never_cache
@login_required
@require_safe
def checkout_success(request):
    # Grants nothing: access follows the webhook. The page polls the stored state while a checkout is pending.
    context = _access_status_context(request, waiting_since=int(time.time()))
    return render(request, "subscriptions/checkout_success.html", context)


@login_required
@require_safe
def checkout_cancel(request):
    return render(request, "subscriptions/checkout_cancel.html")


@login_required
@require_POST
def portal(request):
    try:
        url = services.portal_session_create(
            user=request.user, return_url=request.build_absolute_uri(reverse("accounts:profile"))
        )
    except NoBillingAccount:
        messages.info(request, "You have no subscription to manage yet.")
        return _SeeOther(reverse("subscriptions:pricing"))
    except (StripeNotConfigured, stripe.StripeError) as exc:
        logger.error("Stripe portal session failed: %s", type(exc).__name__)
        messages.error(request, STRIPE_UNREACHABLE)
        return _SeeOther(reverse("accounts:profile"))
    return _SeeOther(url)


@never_cache
@login_required
@require_safe
def access_status(request):
    """The htmx fragment of the success page: polls until the webhook has given access, or for so long."""
    try:
        # Only decides when the page stops polling (and is clamped to now): it grants nothing.
        waiting_since = min(int(request.GET.get("since", "")), int(time.time()))
    except ValueError:
        waiting_since = int(time.time())
    context = _access_status_context(request, waiting_since=waiting_since)
    return render(request, "subscriptions/_access_status.html", context)


@csrf_exempt
@require_POST
def stripe_webhook(request):
    """Verifies, stores once, answers at once; a Celery task does the work (services.event_process)."""
    try:
        event = services.event_verify(payload=request.body, signature=request.headers.get("Stripe-Signature"))
    except WebhookRejected as exc:
        logger.warning("Stripe webhook rejected: %s", exc)
        return HttpResponseBadRequest("Invalid Stripe webhook.", content_type="text/plain")
    stored, created = services.event_record(event=event)
    return HttpResponse("ok" if created else "duplicate", content_type="text/plain")


# --- Test mode only: the stand-in's "hosted" pages (Stripe's own pages do not exist locally) ----------------


@never_cache
@login_required
def test_mode_checkout(request, session_id: str):
    """Stands for Stripe's hosted Checkout page: pay with a test card, or go back."""
    try:
        if request.method == "POST" and request.POST.get("action") == "back":
            return _SeeOther(standin_pages.standin_checkout_abandon(user=request.user, session_id=session_id))
        if request.method == "POST":
            card = request.POST.get("card_number", "")
            try:
                return _SeeOther(
                    standin_pages.standin_checkout_pay(user=request.user, session_id=session_id, card_number=card)
                )
            except CardDeclined as exc:
                messages.error(request, str(exc))
        checkout = standin_pages.standin_checkout_get(user=request.user, session_id=session_id)
    except (NotInTestMode, stripe.InvalidRequestError) as exc:
        raise Http404("No such test-mode checkout.") from exc
    return render(request, "subscriptions/test_mode_checkout.html", {"checkout": checkout})


@never_cache
@login_required
def test_mode_portal(request, session_id: str):
    """Stands for Stripe's Customer Portal: cancel at the period's end, resume, and a test clock."""
    try:
        if request.method == "POST":
            standin_pages.standin_portal_act(
                user=request.user,
                session_id=session_id,
                subscription_id=request.POST.get("subscription", ""),
                action=request.POST.get("action", ""),
            )
            messages.success(request, "Done. Stripe (the stand-in) tells the site by webhook.")
            return _SeeOther(request.path)
        portal = standin_pages.standin_portal_get(user=request.user, session_id=session_id)
    except (NotInTestMode, stripe.InvalidRequestError) as exc:
        raise Http404("No such test-mode portal session.") from exc
    context = {"portal": portal, "clock_seconds": standin_pages.TEST_CLOCK_SECONDS_LEFT}
    return render(request, "subscriptions/test_mode_portal.html", context)
