"""The landing page's and the EPUB's numbers are counted from the content folder, never stated by hand."""

import html
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from apps.catalog.content_files import FRONT_MATTER
from apps.catalog.markdown import render_markdown
from apps.catalog.measurements import measurements_read
from apps.catalog.services import book_import
from tests.conftest import MINI_BOOK


def counted_from_files(folder: Path) -> dict:
    """Counted here from the Markdown files alone, apart from the importer: capsules, figure references, words of
    the rendered prose (runs with a letter or digit; the text of code listings taken out) and reading time at the
    stated speed."""
    capsules = sorted((folder / "capsules").glob("*.md"))
    figures, words = 0, 0
    measurements = measurements_read(folder)  # the measured figures its {{m:KEY}} references cite
    for path in capsules:
        body = path.read_text()[FRONT_MATTER.match(path.read_text()).end() :]
        # Alt text may hold brackets of its own (a caption naming acc[8]): one level of them is allowed.
        figures += len(set(re.findall(r"!\[(?:[^\[\]]|\[[^\]]*\])*\]\((figures/[^)\s]+)\)", body)))
        rendered = render_markdown(body, figure_url=lambda name: name, measurements=measurements)
        text = rendered.text
        for listing in re.findall(r"<pre\b.*?</pre>", rendered.html, flags=re.S):
            listing_text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", listing))).strip()
            assert listing_text in text
            text = text.replace(listing_text, " ", 1)
        words += sum(1 for token in text.split() if re.search(r"[^\W_]", token))
    minutes = -(-words // settings.READING_WORDS_PER_MINUTE)
    return {"capsules": len(capsules), "figures": figures, "words": words, "minutes": minutes}


def stats(page: str) -> str:
    return re.search(r'<ul class="stats".*?</ul>', page, re.S).group(0)


def test_the_landing_page_states_the_counts_of_the_mini_book(mini_book):
    expected = counted_from_files(MINI_BOOK)
    assert expected["figures"] == 2 and expected["minutes"] == 1
    numbers = stats(Client().get("/").content.decode())
    assert f"<strong>{expected['capsules']}</strong> capsules" in numbers
    assert f"<strong>{expected['figures']}</strong> figures" in numbers
    assert f"<strong>{expected['words']:,}</strong> words" in numbers
    assert f"<strong>{expected['minutes']}</strong> minute of reading at 200 words a minute" in numbers


def test_the_reading_speed_is_one_setting(mini_book, settings):
    settings.READING_WORDS_PER_MINUTE = 1
    words = counted_from_files(MINI_BOOK)["words"]
    assert f"<strong>{words}</strong> minutes of reading at 1 words a minute" in stats(
        Client().get("/").content.decode()
    )


@pytest.mark.slow  # imports the whole demo book
def test_the_landing_page_states_the_counts_of_the_demo_book(db):
    book_import(folder=settings.DEMO_BOOK_DIR)
    expected = counted_from_files(Path(settings.DEMO_BOOK_DIR))
    numbers = stats(Client().get("/").content.decode())
    assert f"<strong>{expected['capsules']}</strong> capsules" in numbers
    assert f"<strong>{expected['figures']}</strong> figures" in numbers
    assert f"<strong>{expected['words']:,}</strong> words" in numbers
    assert f"<strong>~{round(expected['minutes'] / 60)}</strong> hours of reading at 200 words a minute" in numbers
    assert "518" not in numbers  # the old hard-coded figure count
