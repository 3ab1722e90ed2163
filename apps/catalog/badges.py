"""What a capsule's badge says. Most badges are topic tags ("TC", "SMEM"); a percentage is a figure: the
book's own published measurement of that capsule's SGEMM kernel, as a percentage of cuBLAS, taken on an
NVIDIA RTX A6000 (the GEMM capsules say so in their text). The judge measures the same kernels on the GPUs
it runs (an H200), and those numbers differ, so every page that shows both says which is which."""

import re

FIGURE_BADGE = re.compile(r"^\d{1,3}(?:\.\d+)?%$")
BOOK_FIGURE_GPU = "NVIDIA RTX A6000"
BOOK_FIGURE_BASELINE = "cuBLAS"


def is_figure_badge(badge: str | None) -> bool:
    return bool(badge) and bool(FIGURE_BADGE.match(badge.strip()))


def figure_badge_description() -> str:
    """The words a percentage badge stands for, for its tooltip and for screen readers."""
    return f"of {BOOK_FIGURE_BASELINE}: the book's figure, measured on an {BOOK_FIGURE_GPU}"
