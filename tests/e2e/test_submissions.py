"""A subscriber submits kernels from the browser, against real Celery workers.

The demo book is imported (its "Kernel 1: Naive" capsule carries the sgemm exercise), the live server
serves the site, and tests/submissions/workers.py starts real `celery -A config worker` processes on the
test Redis broker and this test's database: NVRTC compiles on the compile worker, and the GPU worker runs
the judge's sandboxed child with the CPU stand-in of the GPU job. The browser is Debian's chromium.

Screenshots land in the test's tmp folder and, when SCREENSHOT_DIR is set, there as well:

    SCREENSHOT_DIR=/tmp/shots .venv/bin/pytest tests/e2e/test_submissions.py -q
"""

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from apps.catalog.services import book_import
from apps.submissions.models import Submission
from tests.e2e.pages import axe_problems, sign_in, wait_until_still
from tests.factories import PASSWORD
from tests.submissions.workers import celery_workers  # noqa: F401  (the pipeline's real workers, per module)
from tests.subscriptions.visitors import make_visitor

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DEMO_BOOK = Path(__file__).resolve().parents[2] / "content" / "kernel-engineering"
PROGRESS = "/capsules/kernel-1-naive/progress/"
# An exercise whose problem (vector_add) has a Triton starter: its form offers Triton beside CUDA C++ (issue 46).
TRITON_PROGRESS = "/capsules/your-first-kernel-end-to-end/progress/"
EDITOR_MODE = "document.querySelector('.submission-form .django-ace-widget').editor.session.getMode().$id"
FINISHED = {"passed", "failed", "error", "timed_out"}
# Records every status the latest submission shows, as htmx swaps them in: proof the page changed live.
WATCH_STATUS = """() => {
    window.__statuses = [];
    const note = () => {
        const el = document.querySelector(".submission-latest .submission-latest__status");
        const status = el && el.dataset.status;
        if (status && window.__statuses[window.__statuses.length - 1] !== status) window.__statuses.push(status);
    };
    note();
    new MutationObserver(note).observe(document.getElementById("submissions-live"), {childList: true, subtree: true});
}"""


@pytest.fixture
def demo_book(transactional_db):
    book_import(folder=DEMO_BOOK)


def shoot(page, folder: Path, name: str) -> None:
    wait_until_still(page)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    if overflow > 0:
        # The smallest elements whose removal ends the overflow: what to fix.
        culprits = page.evaluate("""() => {
            const root = document.documentElement, found = [];
            const wide = () => root.scrollWidth > root.clientWidth;
            for (const el of document.querySelectorAll("body *")) {
                const before = el.style.display;
                el.style.display = "none";
                const fixes = !wide();
                el.style.display = before;
                const childFixes = child => {
                    child.style.display = "none";
                    const f = !wide();
                    child.style.display = "";
                    return f;
                };
                if (fixes && ![...el.children].some(childFixes)) found.push(el.tagName + "." + el.className);
            }
            return found.slice(0, 8);
        }""")
        raise AssertionError(f"{name}: the page is {overflow}px wider than the viewport: {culprits}")
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def latest_status(page) -> str:
    return page.locator(".submission-latest .submission-latest__status").get_attribute("data-status")


def test_a_subscriber_submits_watches_it_judged_sees_a_compile_error_and_submits_without_js(
    browser, live_server, demo_book, celery_workers, tmp_path
):
    subscriber = make_visitor("active", name="Ada")
    shots = tmp_path / "screenshots"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    sign_in(page, live_server.url, subscriber.email)

    # The exercise panel: statement, the Ace editor over the textarea, holding the starter.
    page.goto(live_server.url + PROGRESS)
    expect(page.get_by_role("heading", name="Submit the naive SGEMM")).to_be_visible()
    expect(page.locator(".submission-form .ace_editor")).to_be_visible()
    expect(page.locator(".submission-form .ace_content")).to_contain_text("__global__ void sgemm_naive")
    expect(page.locator("textarea[name=source]")).to_be_hidden()  # Ace took over; it writes back on change
    expect(page.locator("#quota")).to_contain_text("submissions left")
    # Tab indents inside the editor instead of leaving it.
    page.locator(".submission-form .ace_content").click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.type("// tuned later")
    assert "\n    // tuned later" in page.locator("textarea[name=source]").input_value()  # soft tab: 4 spaces
    shoot(page, shots, "01-exercise")

    # Submit the starter: back on the progress page, the status changes live until the result.
    page.get_by_role("button", name="Submit for judging").click()
    page.wait_for_url(re.compile(r"/capsules/kernel-1-naive/progress/#submission-"))
    page.evaluate(WATCH_STATUS)
    first = latest_status(page)
    assert first not in FINISHED, f"judged before the page even showed it: {first}"
    expect(page.locator(".submission-latest .badge")).to_have_text("Passed", timeout=60_000)
    statuses = page.evaluate("window.__statuses")
    assert statuses[0] in {"queued", "compiling", "compiled", "running"} and statuses[-1] == "passed", statuses
    assert len(statuses) >= 2, statuses
    figures = page.locator(".submission-latest .submission-figures")
    expect(figures).to_contain_text("of cuBLAS")
    expect(figures).to_contain_text("CPU stand-in")
    expect(page.locator("#submission-announce")).to_contain_text("Passed")
    expect(page.locator(".submission-charts svg[role=img]:visible").first).to_be_visible()
    submission = Submission.objects.get(user=subscriber)
    assert submission.status == "passed" and "\n    // tuned later" in submission.source  # what was typed, stored
    shoot(page, shots, "02-passed")
    problems = {}

    # The full report: correctness per shape, timing, resources, GPU.
    page.get_by_role("link", name=re.compile("Full report")).click()
    expect(page.get_by_role("heading", name="Correctness")).to_be_visible()
    expect(page.get_by_role("heading", name="Timing")).to_be_visible()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    expect(page.locator("main")).to_contain_text("sgemm_naive")
    expect(page.locator("main")).to_contain_text("CPU stand-in")
    shoot(page, shots, "03-report")
    problems["report"] = axe_problems(page)
    # PTX / SASS on request: the compile worker disassembles the cubin; the section asks until it is there.
    page.get_by_role("link", name="Show the PTX and SASS").click()
    sass = page.locator("#assembly-body pre[aria-label='SASS of submission.cu']")
    expect(sass).to_contain_text("Function : _Z11sgemm_naive", timeout=60_000)  # the kernel's C++ (mangled) name
    expect(page.locator("#assembly-body")).to_contain_text(".visible .entry _Z11sgemm_naive")
    page.locator("#assembly-body summary", has_text="SASS").click()
    expect(sass).to_be_visible()
    expect(sass).to_contain_text("FFMA")
    shoot(page, shots, "03b-report-sass")
    problems["report, PTX / SASS"] = axe_problems(page)

    # A broken file, uploaded: the compile error comes back with its line number and code.
    page.goto(live_server.url + PROGRESS)
    broken = submission.source.replace("float acc = 0.0f;", "float acc = 0.0f")
    line = next(n for n, text in enumerate(broken.splitlines(), 1) if "float acc = 0.0f" in text)
    page.locator("summary", has_text="Launch plan and file upload").click()
    page.set_input_files(
        "input[name=upload]", files=[{"name": "broken.cu", "mimeType": "text/plain", "buffer": broken.encode()}]
    )
    page.get_by_role("button", name="Submit for judging").click()
    page.wait_for_url(re.compile(r"#submission-"))
    expect(page.locator(".submission-latest .badge")).to_have_text("Failed", timeout=60_000)
    expect(page.locator(".submission-latest")).to_contain_text("Compile error")
    diagnostic = page.locator(".submission-latest .diagnostic").first
    expect(diagnostic.locator(".diagnostic__line")).to_have_text(re.compile(r"Line \d+"))
    number = int(diagnostic.locator(".diagnostic__line").inner_text().split()[1])
    assert number in (line, line + 1), (number, line)  # NVRTC names the line where it noticed the missing ';'
    expect(diagnostic).to_contain_text("error")
    expect(diagnostic.locator(".diagnostic__code")).to_contain_text(broken.splitlines()[number - 1].strip())
    expect(page.locator(".submission-latest")).to_contain_text("broken.cu")
    shoot(page, shots, "04-compile-error")
    problems["progress page, compile error"] = axe_problems(page)
    page.emulate_media(color_scheme="dark")  # the site and the editor follow the reader's scheme
    expect(page.locator(".submission-form .ace_editor.ace-tomorrow-night")).to_be_visible()
    shoot(page, shots, "04-compile-error-dark")
    problems["progress page, compile error, dark"] = axe_problems(page)
    page.emulate_media(color_scheme="light")

    # What changed between the two: the diff, from the report's compare form.
    page.get_by_role("link", name=re.compile("Full report")).click()
    page.get_by_role("button", name="Show the diff").click()
    expect(page.get_by_role("heading", name="What changed")).to_be_visible()
    expect(page.locator("tr.diff__removed").first).to_contain_text("float acc = 0.0f;")
    expect(page.locator("tr.diff__added").first).to_contain_text("float acc = 0.0f")
    shoot(page, shots, "05-diff")
    problems["diff"] = axe_problems(page)

    # The leaderboard and the ladder on "my progress".
    page.goto(live_server.url + "/capsules/kernel-1-naive/leaderboard/")
    expect(page.locator("table.leaderboard")).to_contain_text("Ada")
    shoot(page, shots, "06-leaderboard")
    problems["leaderboard"] = axe_problems(page)
    page.goto(live_server.url + "/progress/")
    expect(page.locator(".gemm-ladder")).to_contain_text("Kernel 1: Naive")
    expect(page.locator(".gemm-ladder svg[role=img]:visible")).to_be_visible()
    shoot(page, shots, "07-my-progress")
    problems["my progress"] = axe_problems(page)

    # Triton as a second language: choosing it puts the problem's Triton starter in the editor, coloured as Python,
    # into the textarea that posts; choosing CUDA C++ again brings back the CUDA text as it was left.
    page.goto(live_server.url + TRITON_PROGRESS)
    expect(page.locator(".submission-form .ace_content")).to_contain_text("__global__ void vector_add")
    assert page.evaluate(EDITOR_MODE) == "ace/mode/cuda"
    page.locator(".submission-form .ace_content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("// my CUDA notes")
    page.get_by_role("radio", name="Triton").check()
    expect(page.locator(".submission-form .ace_content")).to_contain_text("@triton.jit")
    expect(page.locator(".submission-form .ace_content")).to_contain_text("def vector_add(a_ptr, b_ptr, c_ptr, n")
    assert page.evaluate(EDITOR_MODE) == "ace/mode/python"
    triton_text = page.locator("textarea[name=source]").input_value()
    assert triton_text == (DEMO_BOOK.parents[1] / "kernels/problems/vector_add/example_triton.py").read_text()
    assert page.locator("input[name=upload]").get_attribute("accept").startswith(".py")
    shoot(page, shots, "07b-triton-starter")
    problems["progress page, Triton chosen"] = axe_problems(page)
    page.get_by_role("radio", name="CUDA C++").check()
    expect(page.locator(".submission-form .ace_content")).to_contain_text("// my CUDA notes")
    assert page.evaluate(EDITOR_MODE) == "ace/mode/cuda"

    # On a phone: nothing scrolls sideways, the editor still fits.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_server.url + PROGRESS)
    expect(page.locator(".submission-form .ace_editor")).to_be_visible()
    shoot(page, shots, "08-phone")
    found = [f"{where}: {p}" for where, ps in problems.items() for p in ps]
    assert not found, "axe-core found serious or critical violations:\n" + "\n".join(found)

    # Without JavaScript the plain textarea is the form, and it submits.
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    plain.set_default_timeout(30_000)
    plain.goto(live_server.url + "/accounts/login/")
    plain.fill("input[name=login]", subscriber.email)
    plain.fill("input[name=password]", PASSWORD)
    plain.locator("main form button[type=submit]").click()
    plain.goto(live_server.url + PROGRESS)
    textarea = plain.locator("textarea[name=source]")
    expect(textarea).to_be_visible()
    textarea.fill("")
    plain.get_by_role("button", name="Submit for judging").click()
    expect(plain.locator(".submission-form")).to_contain_text("The source is empty")
    plain.locator("textarea[name=source]").fill(submission.source + "// no script here\n")
    plain.get_by_role("button", name="Submit for judging").click()
    plain.wait_for_url(re.compile(r"#submission-"))
    expect(plain.locator(".submission-latest")).to_be_visible()
    last = Submission.objects.filter(user=subscriber).order_by("-created_at").first()
    assert (
        last.source == submission.source + "// no script here\n"
        and Submission.objects.filter(user=subscriber).count() == 3
    )
    # Let the workers finish with it before the test's tables are emptied.
    deadline = time.monotonic() + 60
    while not Submission.objects.get(pk=last.pk).is_finished and time.monotonic() < deadline:
        time.sleep(0.2)
    assert Submission.objects.get(pk=last.pk).status == "passed"
    context.close()

    if os.environ.get("SCREENSHOT_DIR"):
        target = Path(os.environ["SCREENSHOT_DIR"])
        target.mkdir(parents=True, exist_ok=True)
        for shot in shots.glob("*.png"):
            shutil.copy(shot, target / f"submissions-{shot.name}")
    page.close()
