"""Issue 44: "My progress" shows the reading first, then the exercise ladders; a ladder with nothing submitted keeps
its table folded (a closed <details>), one with submissions shows it open."""

import re

from apps.submissions import services
from tests.submissions.conftest import NAIVE, make_exercise
from tests.submissions.test_views import client_for, locked_exercise, subscriber  # noqa: F401  (fixtures)


def ladder(body: str, key: str) -> str:
    return re.search(rf'class="card problem-ladder {key}-ladder.*?</section>', body, re.S).group(0)


def test_reading_comes_first_and_empty_exercise_tables_are_folded(mini_book, locked_exercise, subscriber):  # noqa: F811
    make_exercise(mini_book.capsules.get(number=3), problem="softmax", title="Softmax")
    services.submission_create(user=subscriber, exercise=locked_exercise, source=NAIVE)
    body = client_for(subscriber).get("/progress/").content.decode()
    first_part, first_ladder = body.index('<section class="part"'), body.index("problem-ladder ")
    assert first_part < first_ladder
    gemm, softmax = ladder(body, "gemm"), ladder(body, "softmax")
    assert "problem-ladder__fold" not in gemm and "<table" in gemm  # tried: the table shows
    fold = re.search(
        r"<details class=\"problem-ladder__fold\">\s*<summary>(.*?)</summary>.*?<table.*?</details>", softmax, re.S
    )
    assert fold and fold.group(1) == "Nothing submitted yet: the 1 exercise and the book's kernels"
