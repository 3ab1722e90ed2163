"""What the browser tests do on many pages: sign in through the real form, and ask axe-core for problems."""

import time

from playwright.sync_api import expect

from tests.factories import PASSWORD


def sign_in(page, base_url, email):
    page.goto(base_url + "/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", PASSWORD)
    page.locator("main form button[type=submit]").click()
    # In the DOM rather than visible: on a phone it waits behind the header's Menu button.
    sign_out = page.locator("header.site-header").get_by_role("button", name="Sign out", include_hidden=True)
    expect(sign_out).to_be_attached()


def close_without_goodbyes(context):
    """Close a browser context without the requests its pages send on the way out (the reader's beacons).

    Offline, not `route(...abort)`: Chromium sends a page's closing beacon past request interception.
    """
    context.set_offline(True)
    context.close()


def axe_problems(page) -> list[str]:
    """The serious and critical accessibility violations axe-core finds on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    # Colour contrast is judged on what is painted: let entrance animations (the resume notice
    # fades in) finish first, or axe measures a half-transparent frame.
    wait_until_still(page)
    problems = []
    for violation in Axe().run(page).response["violations"]:
        if violation["impact"] in ("serious", "critical"):
            targets = [" ".join(map(str, node["target"])) for node in violation["nodes"][:5]]
            problems.append(f"{violation['id']} ({violation['impact']}): {violation['help']} at {targets}")
    return problems


def wait_until_still(page) -> None:
    """Until no animation or transition that ends is running (hover fades, a colour-scheme switch, the
    resume notice; endless ones such as the editor's blinking cursor never settle, so they do not
    count): what a screenshot or a check then sees is what the page settles on."""
    wait_until_true(
        page,
        """() => document.getAnimations().every(
            a => a.playState !== "running" || a.effect.getComputedTiming().endTime === Infinity
        )""",
    )


def wait_until_true(page, function: str, timeout_s: float = 15.0, interval_s: float = 0.05) -> None:
    """page.wait_for_function, polled from here: Playwright's own polling evaluates the predicate with the page's
    eval(), which the site's Content-Security-Policy (script-src 'self', no 'unsafe-eval') refuses, while
    page.evaluate goes through the DevTools protocol and is not subject to it."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(function):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout_s} s: {function}")
        time.sleep(interval_s)
