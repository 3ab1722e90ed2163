"""Issue 17: a submission's report shows the source coloured as the book's code is, and its "compare with"
control is as wide as its content and as tall as its button, on a desktop and on a phone. Issue 43: its profile
section's "Profile again" asks for a new profile and comes back to the report saying so, and a profile recorded on a
GPU shows its findings, its hottest source lines and downloads its report."""

import gzip
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

import kernels
from apps.submissions import services
from apps.submissions.models import ProfileRequest
from kernels import profile as profile_mod
from tests.e2e.pages import axe_problems, sign_in
from tests.submissions.test_views import judged, locked_exercise, subscriber  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
RECORDED_REPORT = Path(__file__).parents[1] / "kernels" / "profiles" / "h100_sgemm_05.ncu-rep.gz"


def colour(locator) -> str:
    return locator.evaluate("el => getComputedStyle(el).color")


def test_the_report_source_is_highlighted_like_the_book_and_compare_fits_its_content(
    page, live_server, locked_exercise, subscriber
):  # noqa: F811
    judged(subscriber, locked_exercise, pct=1.1)
    latest = judged(subscriber, locked_exercise, pct=1.3)
    sign_in(page, live_server.url, subscriber.email)
    page.goto(live_server.url + f"/submissions/{latest.public_id}/")

    source = page.locator("section[aria-labelledby=source-title]")
    listing = source.locator("pre.numbered--source")
    # Pygments' token classes, in the reader's colours: a type, a keyword and a comment each differ from plain text.
    plain = colour(listing.locator(".n").first)
    for token in (".kt", ".k", ".c1"):
        expect(listing.locator(token).first).to_be_visible()
        assert colour(listing.locator(token).first) != plain, token
    # Still numbered line by line, for the compiler's line numbers and links to a line.
    expect(listing.locator("#src-L1")).to_have_attribute("data-n", "1")
    assert listing.locator(".numbered__line").count() == len(latest.source.split("\n")) - latest.source.endswith("\n")

    select = page.get_by_label("Compare with")
    button = page.get_by_role("button", name="Show the diff")
    card = source.bounding_box()
    box, button_box = select.bounding_box(), button.bounding_box()
    assert box["width"] < card["width"] * 0.75, (box, card)  # its options' width, not the card's
    assert abs(box["height"] - button_box["height"]) <= 4, (box, button_box)
    problems = axe_problems(page)

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert select.bounding_box()["x"] + select.bounding_box()["width"] <= 390
    problems += axe_problems(page)
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


def test_profile_again_is_a_button_that_queues_a_profile_and_says_how_many_are_left(
    page, live_server, locked_exercise, subscriber, settings
):  # noqa: F811
    settings.PROFILE_REQUESTS_PER_DAY = 5
    submission = judged(subscriber, locked_exercise, pct=1.2)
    # The profile a GPU node without Nsight Compute records (what the worker's judge answers there).
    services.profile_record(submission_id=submission.pk, document=profile_mod.profile_no_ncu("ncu on PATH"))
    sign_in(page, live_server.url, subscriber.email)
    report = live_server.url + f"/submissions/{submission.public_id}/"
    page.goto(report)

    section = page.locator("#profile")
    expect(section).to_contain_text("Profiling is off on this node: no ncu found on this node")
    expect(section).to_contain_text("5 of your 5 requests a day left.")
    section.get_by_role("button", name="Profile again").click()

    expect(page).to_have_url(report)
    expect(page.get_by_role("status").filter(has_text="A new profile is queued")).to_contain_text(
        "4 of your 5 requests a day left."
    )
    expect(section.locator("[data-profile-pending]")).to_contain_text("on its way")
    expect(section.get_by_role("button", name="Profile again")).to_have_count(0)
    assert ProfileRequest.objects.filter(user=subscriber, submission=submission).count() == 1
    problems = axe_problems(page)
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


class RecordedProfiles:
    """What a GPU worker's judge answers for SGEMM rung 05: the profile recorded on an H100 (tests/kernels/profiles,
    read by the real kernels.profile_report) and its real .ncu-rep. Stands for the GPU, not for our code."""

    def profile(self, compiled, judged, *, ncu_setting="", budget_s=10.0):
        from kernels.profile_run import ProfileRun
        from tests.kernels.test_profile_report import RECORDED, sgemm_05

        return ProfileRun(sgemm_05(), gzip.decompress((RECORDED / "h100_sgemm_05.ncu-rep.gz").read_bytes()))


def test_a_recorded_profile_shows_its_findings_its_hot_source_lines_and_downloads_its_report(
    page, live_server, locked_exercise, subscriber, settings, tmp_path
):  # noqa: F811
    settings.PROFILE_ROOT = tmp_path
    rung_05 = (Path(kernels.__file__).parent / "reference" / "05_blocktile_2d.cu").read_text()
    submission = judged(subscriber, locked_exercise, pct=30.0, source=rung_05)
    assert services.submission_profile(submission_id=submission.pk, judge=RecordedProfiles()) is not None
    sign_in(page, live_server.url, subscriber.email)
    page.goto(live_server.url + f"/submissions/{submission.public_id}/")

    section = page.locator("#profile")
    findings = section.locator("li.profile-finding")
    expect(findings.first).to_have_attribute("data-rule", "uncoalesced_global_stores")
    expect(findings.first).to_contain_text("4.0 of the 32 bytes")
    expect(findings.first.get_by_role("link")).to_have_attribute("href", re.compile(r"/capsules?/"))
    expect(section.locator(".profile-source__hot")).to_have_count(5)  # the five hottest lines, in source order
    hot = section.locator('.profile-source__hot[data-n="42"]')  # the inner product: the hottest
    expect(hot).to_contain_text("37% of samples")
    expect(hot).to_contain_text("waiting for shared memory")
    # The compute pipes as measured: rung 05's FP32 products keep the FMA pipe busy a quarter of its cycles.
    expect(section.locator(".profile-pipes")).to_contain_text("FMA (FP32 multiply-add)")
    expect(section.locator(".profile-pipes")).to_contain_text("26% busy")
    with page.expect_download() as download_info:
        section.get_by_role("link", name="Download the Nsight Compute report (.ncu-rep)").click()
    saved = download_info.value.path()
    assert Path(saved).read_bytes() == gzip.decompress((RECORDED_REPORT).read_bytes())
    problems = axe_problems(page)
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)
