"""Issue 17's reader comforts in a real browser: the phone header's menu, the contents' free/lock marks,
"my progress" on a phone, the display settings (theme, text size) remembered without a reload and
before paint, and the keyboard shortcuts with their help dialog.

Screenshots land in the test's tmp folder and, when SCREENSHOT_DIR is set, there as well.
"""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from apps.catalog.models import Capsule
from apps.catalog.services import book_import
from tests.e2e.pages import axe_problems, close_without_goodbyes, sign_in, wait_until_still
from tests.subscriptions.visitors import make_visitor

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DEMO_BOOK = Path(__file__).resolve().parents[2] / "content" / "kernel-engineering"
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def demo_book(db):
    book_import(folder=DEMO_BOOK)


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    close_without_goodbyes(context)


def shoot(page, tmp_path: Path, name: str) -> None:
    wait_until_still(page)
    path = tmp_path / f"{name}.png"
    page.screenshot(path=path, full_page=False)
    if os.environ.get("SCREENSHOT_DIR"):
        shutil.copy(path, Path(os.environ["SCREENSHOT_DIR"]) / path.name)


def capsule_url(live_server, number: int) -> str:
    return live_server.url + Capsule.objects.get(number=number).get_absolute_url()


def test_the_phone_header_is_one_row_with_a_menu_for_keyboards_and_screen_readers(
    phone, live_server, demo_book, tmp_path
):
    reader = make_visitor("free", email="phone@example.org", name="Pat Phone")
    sign_in(phone, live_server.url, reader.email)
    phone.goto(capsule_url(live_server, 1))
    header = phone.locator("header.site-header")
    menu_button = header.get_by_role("button", name="Menu")
    main_nav = header.get_by_role("navigation", name="Main")

    # One row: the brand, Display and Menu; the navigations wait behind the button.
    expect(menu_button).to_be_visible()
    expect(menu_button).to_have_attribute("aria-expanded", "false")
    expect(main_nav).to_be_hidden()
    shoot(phone, tmp_path, "phone-header-closed")
    assert header.bounding_box()["height"] < 80, header.bounding_box()  # one row (three before issue 17)
    problems = axe_problems(phone)

    # The keyboard opens it; the links are there, in reading order; Esc closes it and the focus returns.
    menu_button.focus()
    phone.keyboard.press("Enter")
    expect(menu_button).to_have_attribute("aria-expanded", "true")
    expect(main_nav.get_by_role("link", name="My progress")).to_be_visible()
    expect(header.get_by_role("button", name="Sign out")).to_be_visible()
    assert phone.evaluate(
        "document.getElementById(document.querySelector('.site-header__menu-button')"
        ".getAttribute('aria-controls')) !== null"
    )
    problems += axe_problems(phone)
    shoot(phone, tmp_path, "phone-header-open")
    phone.keyboard.press("Tab")
    phone.keyboard.press("Escape")
    expect(menu_button).to_have_attribute("aria-expanded", "false")
    expect(menu_button).to_be_focused()
    expect(main_nav).to_be_hidden()

    # A tap on the button opens it too, and a link in it works.
    menu_button.click()
    main_nav.get_by_role("link", name="My progress").click()
    expect(phone).to_have_url(live_server.url + "/progress/")
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


def test_without_javascript_the_phone_header_shows_the_navigation(browser, live_server, demo_book):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + "/")
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Search")).to_be_visible()
    expect(page.locator(".site-header__menu-button")).to_be_hidden()
    expect(page.locator(".display-settings__button")).to_be_hidden()
    context.close()


def test_the_contents_sidebar_marks_free_and_locked_capsules_in_words(page, live_server, demo_book):
    page.goto(capsule_url(live_server, 1))
    contents = page.get_by_role("navigation", name="Book contents")
    free = Capsule.objects.published().filter(access=Capsule.Access.FREE).order_by("number")
    locked = Capsule.objects.published().filter(access=Capsule.Access.LOCKED).order_by("number")
    free_link = contents.get_by_role("link", name=free[1].title, exact=False).first
    locked_link = contents.get_by_role("link", name=locked[0].title, exact=False).first
    # The accessible names carry the state, not only a colour or an icon.
    expect(free_link).to_have_accessible_name(f"{free[1].number:02d} {free[1].title} free")
    expect(locked_link).to_have_accessible_name(f"{locked[0].number:02d} {locked[0].title} (locked, for subscribers)")
    assert contents.locator(".reader-nav__mark--free").count() == free.count()
    assert contents.locator(".reader-nav__mark--locked").count() == locked.count()
    problems = axe_problems(page)

    # A subscriber reads everything: no locks, the free marks stay.
    subscriber = make_visitor("active", email="sub@example.org")
    sign_in(page, live_server.url, subscriber.email)
    page.goto(capsule_url(live_server, locked[0].number))
    contents = page.get_by_role("navigation", name="Book contents")
    expect(contents.locator(".reader-nav__mark--locked")).to_have_count(0)
    expect(contents.locator(".reader-nav__mark--free")).to_have_count(free.count())
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


def test_my_progress_fits_a_phone_and_its_tables_scroll_in_a_focusable_region(phone, live_server, demo_book, tmp_path):
    reader = make_visitor("free", email="phone@example.org")
    sign_in(phone, live_server.url, reader.email)
    phone.goto(live_server.url + "/progress/")
    expect(phone.get_by_role("heading", name="My progress", level=1)).to_be_visible()
    # Nothing sticks out of the page sideways, and the ladders fit whole: before issue 17 a 300-pixel window
    # onto a 1000-pixel table showed two of its nine columns, and looked cut off.
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    ladders = phone.locator(".problem-ladder .table-wrap")
    assert ladders.count() >= 1
    # Nothing submitted yet: each ladder's table is folded (issue 44); the reader opens them to look.
    expect(phone.locator(".problem-ladder__fold:not([open])")).to_have_count(ladders.count())
    for summary in phone.locator(".problem-ladder__fold > summary").all():
        summary.click()
    expect(phone.locator(".problem-ladder__fold[open]")).to_have_count(ladders.count())
    for region in ladders.all():
        assert region.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), region.evaluate("el => el.scrollWidth")
    # Every figure says what it is next to it, the group (yours or the book's) included.
    first_row = phone.locator(".problem-ladder__table tbody tr").first
    expect(first_row.locator("td[data-label^='Book']").first).to_be_visible()
    label = first_row.locator("td").nth(2).evaluate("el => getComputedStyle(el, '::before').content")
    assert label.startswith('"Your best:'), label
    problems = axe_problems(phone)
    shoot(phone, tmp_path, "phone-my-progress")

    # On a desktop the ladders are tables again, and fit their cards whole: nothing hidden to scroll to.
    phone.set_viewport_size({"width": 1280, "height": 900})
    for region in ladders.all():
        assert region.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), region.evaluate("el => el.scrollWidth")
    expect(phone.locator(".problem-ladder__table thead").first).to_be_visible()
    assert (
        phone.locator(".problem-ladder__table tbody tr").first.evaluate("el => getComputedStyle(el).display")
        == "table-row"
    )
    problems += axe_problems(phone)
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


def background(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def test_theme_and_text_size_are_remembered_without_a_reload_and_applied_before_paint(
    browser, live_server, demo_book, tmp_path
):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    page = context.new_page()
    page.set_default_timeout(15_000)
    # Record the theme at the moment <body> is created, before anything could be painted.
    context.add_init_script(
        """new MutationObserver((records, observer) => {
            if (document.body) {
                window.__themeAtBody = document.documentElement.getAttribute("data-theme");
                window.__sizeAtBody = document.documentElement.getAttribute("data-font-size");
                observer.disconnect();
            }
        }).observe(document, {childList: true, subtree: true});"""
    )
    page.goto(capsule_url(live_server, 1))
    light = background(page)
    root_size = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")

    settings = page.get_by_role("button", name="Display")
    settings.click()
    expect(settings).to_have_attribute("aria-expanded", "true")
    panel = page.locator("#display-settings-panel")
    expect(panel.get_by_role("radio", name="System")).to_be_checked()
    panel.get_by_role("radio", name="Dark").check()
    # At once, no reload: the page is dark while the system is light.
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert background(page) != light
    dark = background(page)
    panel.get_by_role("radio", name="Large", exact=True).check()
    larger = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert larger == pytest.approx(root_size * 1.125, rel=0.01)
    problems = axe_problems(page)
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(settings).to_be_focused()
    shoot(page, tmp_path, "desktop-dark-large")

    # Remembered in this browser, and there before <body> exists: no flash of the light theme.
    page.goto(live_server.url + "/")
    assert page.evaluate("window.__themeAtBody") == "dark"
    assert page.evaluate("window.__sizeAtBody") == "large"
    assert background(page) == dark
    problems += axe_problems(page)

    # Another tab follows a change without a reload.
    other = context.new_page()
    other.goto(live_server.url + "/")
    assert background(other) == dark
    page.get_by_role("button", name="Display").click()
    page.locator("#display-settings-panel").get_by_role("radio", name="Light").check()
    expect(other.locator("html")).to_have_attribute("data-theme", "light")
    # "System" forgets the choice: the system's scheme applies again.
    page.locator("#display-settings-panel").get_by_role("radio", name="System").check()
    page.emulate_media(color_scheme="dark")
    expect(page.locator("html")).not_to_have_attribute("data-theme", "light")
    assert background(page) == dark
    assert page.evaluate("localStorage.getItem('ke-theme')") is None
    close_without_goodbyes(context)
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


def test_keyboard_shortcuts_move_between_capsules_and_their_help_is_a_dialog(page, live_server, demo_book, tmp_path):
    second, third = Capsule.objects.published().order_by("number")[1:3]
    page.goto(live_server.url + second.get_absolute_url())
    page.keyboard.press("n")
    expect(page).to_have_url(live_server.url + third.get_absolute_url())
    # The URL changes when the next page starts to arrive; its shortcuts listen once its scripts have run.
    page.wait_for_load_state("load")
    page.keyboard.press("p")
    expect(page).to_have_url(live_server.url + second.get_absolute_url())
    page.wait_for_load_state("load")

    # "?" opens the help: a modal dialog with its name, the focus inside; Esc closes it, the focus returns.
    page.get_by_role("link", name="Skip to content").focus()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Next capsule")
    assert page.evaluate("document.activeElement.closest('dialog') !== null")
    page.keyboard.press("n")  # shortcuts rest while the help is open
    expect(page).to_have_url(live_server.url + second.get_absolute_url())
    problems = axe_problems(page)
    shoot(page, tmp_path, "desktop-shortcuts-help")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()

    # "t" switches the theme; "+" enlarges the text.
    page.keyboard.press("t")
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    page.keyboard.press("t")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.keyboard.press("+")
    expect(page.locator("html")).to_have_attribute("data-font-size", "large")

    # While typing, the keys are the reader's: "n" in the search field is a letter, not a page turn.
    page.keyboard.press("/")
    expect(page).to_have_url(live_server.url + "/search/")
    field = page.get_by_role("searchbox")
    field.focus()
    page.keyboard.type("np?")
    expect(field).to_have_value("np?")
    expect(page.get_by_role("dialog")).to_be_hidden()
    page.keyboard.press("Escape")
    page.locator("h1").first.click()
    page.keyboard.press("/")
    expect(field).to_be_focused()
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)
