"""Stripe test mode, as a newcomer meets it: `make run` on its embedded defaults (SQLite, the file-system broker,
no Stripe key), which starts the Stripe stand-in beside the web server and the Celery worker. A demo reader
subscribes at a locked capsule through the test-mode Checkout, reads it, cancels in the test-mode Portal, keeps
access until the period's end (brought near by the stand-in's test clock), then finds the capsule locked again.
Every change of access arrives the production way: a signed webhook from the stand-in, stored, processed by the
worker re-reading the subscription from the stand-in."""

import re
import time

import pytest
from playwright.sync_api import expect

from apps.demo.data import DEMO_PASSWORD
from tests.e2e.pages import axe_problems
from tests.test_make_run import _reachable, _wait_for, dev_site  # noqa: F401  (dev_site: the fixture)

pytestmark = pytest.mark.slow

LOCKED = "/capsules/gpcs-tpcs-and-the-chip-floorplan/"
WEBHOOK_WAIT_MS = 30_000  # the stand-in's delivery, the file-system broker's polling, the worker's re-read


def reload_until(page, condition, *, timeout_s: float = 30, what: str) -> None:
    """Reloads until `condition()` holds: what the page shows changes only on the server's side."""
    deadline = time.monotonic() + timeout_s
    while True:
        page.reload()
        if condition():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        page.wait_for_load_state("load")


def test_a_reader_subscribes_reads_cancels_and_is_locked_out_at_the_periods_end_in_test_mode(page, dev_site):  # noqa: F811
    base_url, _env, log_path = dev_site
    _wait_for(lambda: _reachable(base_url + "/health/"), 120, "the development server")

    # A free demo reader meets a locked capsule; every page says test mode.
    page.goto(base_url + "/accounts/login/")
    page.fill("input[name=login]", "reader@example.com")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.locator("main form button[type=submit]").click()
    expect(
        page.locator("header.site-header").get_by_role("button", name="Sign out", include_hidden=True)
    ).to_be_attached()
    page.goto(base_url + LOCKED)
    expect(page.locator("#test-mode-banner")).to_be_visible()
    expect(page.locator("#test-mode-banner")).to_contain_text("no card is ever charged")
    expect(page.locator(".paywall")).to_be_visible()
    expect(page.locator("#capsule-body")).to_have_count(0)

    # Pricing: both plans with the stand-in's prices.
    page.locator(".paywall").get_by_role("link", name="See plans and subscribe").click()
    expect(page).to_have_url(re.compile(r"/pricing/\?next="))
    expect(page.locator(".pricing-plan").first).to_contain_text("€12")
    expect(page.locator(".pricing-plan").nth(1)).to_contain_text("€120")
    expect(page.locator("#test-mode-banner")).to_be_visible()
    assert axe_problems(page) == []
    page.get_by_role("button", name="Subscribe monthly").click()

    # The test-mode Checkout (our stand-in for Stripe's hosted page): pay with the test card.
    expect(page).to_have_url(re.compile(r"/billing/test-mode/checkout/cs_test_\w+/$"))
    expect(page.get_by_role("heading", name="Checkout (test mode)")).to_be_visible()
    expect(page.locator("main")).to_contain_text("€12")
    assert axe_problems(page) == []
    page.get_by_role("button", name="Pay with the test card").click()

    # Back on the site: access comes once the webhook has been processed, then the way back to the capsule.
    expect(page).to_have_url(re.compile(r"/billing/success/\?session_id=cs_test_\w+&next="))
    expect(page.locator("#access-status")).to_contain_text("Your subscription is active", timeout=WEBHOOK_WAIT_MS)
    page.get_by_role("link", name="Continue reading").click()
    expect(page).to_have_url(re.compile(re.escape(LOCKED) + "$"))
    expect(page.locator("#capsule-body")).to_be_visible()
    expect(page.locator(".paywall")).to_have_count(0)

    # The account page shows the plan; the test-mode Portal cancels at the period's end.
    page.goto(base_url + "/accounts/profile/")
    billing = page.locator("#billing")
    expect(billing).to_contain_text("Monthly")
    expect(billing).to_contain_text("Renews on")
    billing.get_by_role("button", name="Manage billing").click()
    expect(page).to_have_url(re.compile(r"/billing/test-mode/portal/bps_\w+/$"))
    expect(page.get_by_role("heading", name="Manage your subscription")).to_be_visible()
    expect(page.locator("#test-mode-banner")).to_be_visible()
    assert axe_problems(page) == []
    page.get_by_role("button", name="Cancel subscription").click()
    expect(page.get_by_role("button", name="Resume subscription")).to_be_visible()
    portal_url = page.url
    page.get_by_role("link", name="Return to Kernel Engineering").click()
    expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
    reload_until(
        page, lambda: "will not renew" in page.locator("#billing").inner_text(), what="the cancellation's webhook"
    )
    expect(page.locator("#billing")).to_contain_text("Access until")

    # Until the period ends the capsule stays open...
    page.goto(base_url + LOCKED)
    expect(page.locator("#capsule-body")).to_be_visible()

    # ...then the test clock brings the period's end to a few seconds from now (instead of a month), and once it
    # has passed the capsule is locked again; the stand-in then ends the subscription, as Stripe does.
    page.goto(portal_url)
    page.get_by_role("button", name=re.compile(r"Test clock: end this period")).click()
    expect(page.locator(".message--success")).to_be_visible()
    page.goto(base_url + LOCKED)
    reload_until(page, lambda: page.locator(".paywall").count() == 1, what="the paywall after the period's end")
    expect(page.locator("#capsule-body")).to_have_count(0)

    page.goto(base_url + "/accounts/profile/")
    reload_until(
        page, lambda: "canceled" in page.locator("#billing").inner_text().lower(), what="the `deleted` webhook"
    )
    expect(page.locator("#billing").get_by_role("link", name="Subscribe again")).to_be_visible()

    # It all went through the production webhook: signed deliveries, every one accepted.
    log = log_path.read_text()
    for event_type in ("checkout.session.completed", "customer.subscription.updated", "customer.subscription.deleted"):
        assert f'webhook "{event_type}" successfully delivered' in log, event_type
    assert "failed with response code" not in log
