"""Formatting for the submission pages: numbered lines, compiler diagnostics, figures, status badges."""

import re

from django import template
from django.utils.safestring import mark_safe

from apps.catalog.markdown import highlight_lines
from apps.submissions.charts import fmt_pct
from apps.submissions.models import Submission, Unit
from apps.submissions.selectors import LANGUAGE_LEXER

register = template.Library()

# NVRTC writes `submission.cu(12): error: ...` (ptxas lines have no file position).
_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\s()]+)\((?P<line>\d+)\): (?P<kind>error|warning|remark)(?: #\S+)?: (?P<message>.*)$"
)

_BADGE = {
    Submission.Status.PASSED: "badge--success",
    Submission.Status.FAILED: "badge--danger",
    Submission.Status.ERROR: "badge--danger",
    Submission.Status.TIMED_OUT: "badge--warning",
}


@register.filter
def numbered(text) -> list[tuple[int, str]]:
    """(line number, line) pairs; the template escapes the lines."""
    return list(enumerate((text or "").splitlines(), start=1))


@register.filter
def highlighted(source, language="cuda") -> list[tuple[int, str]]:
    """(line number, highlighted line) pairs of a submission's source in its language (a CUDA file, or a Triton one
    as Python), coloured as the book's code blocks are (Pygments through the catalogue's highlighter; its formatter
    escapes the text)."""
    lexer = LANGUAGE_LEXER.get(language or "cuda", "cuda")
    return [(n, mark_safe(line)) for n, line in enumerate(highlight_lines(source or "", lexer), start=1)]


@register.filter
def lexer_of(language) -> str:
    """The code block's language class for a submission's language: "cuda" or "python"."""
    return LANGUAGE_LEXER.get(language or "cuda", "cuda")


@register.simple_tag
def diagnostics(log, source="") -> list[dict]:
    """Compiler errors and warnings that name a line, with that line of the submitted source."""
    source_lines = (source or "").splitlines()
    found = []
    for raw in (log or "").splitlines():
        match = _DIAGNOSTIC.match(raw.strip())
        if not match:
            continue
        number = int(match["line"])
        found.append(
            {
                "line": number,
                "kind": match["kind"],
                "message": match["message"],
                "code": source_lines[number - 1] if 0 < number <= len(source_lines) else "",
            }
        )
    return found


@register.filter
def pct(value) -> str:
    return "–" if value is None else fmt_pct(float(value))


@register.filter
def ms(value) -> str:
    if value is None:
        return "–"
    value = float(value)
    if value >= 100:
        return f"{value:.0f} ms"
    if value >= 1:
        return f"{value:.2f} ms"
    return f"{value * 1000:.1f} µs"


@register.filter
def number(value, digits=1) -> str:
    if value is None:
        return "–"
    return f"{float(value):,.{int(digits)}f}"


@register.filter
def throughput(figures, tflops_digits=1) -> str:
    """A result's throughput in its own unit, without the unit: GB/s as whole numbers, TFLOP/s with
    `tflops_digits` decimals. `figures` is a Submission or ReferenceResult, or a benchmark of the judge's JSON
    (one stored before GB/s problems existed has no `unit`: it is TFLOP/s)."""
    if figures is None:
        return "–"
    if isinstance(figures, dict):
        unit, tflops, gbps = figures.get("unit") or Unit.TFLOPS, figures.get("tflops"), figures.get("gbps")
    else:
        unit, tflops, gbps = figures.unit, figures.tflops, figures.gbps
    if unit == Unit.GBPS:
        return "–" if gbps is None else f"{float(gbps):,.0f}"
    return "–" if tflops is None else f"{float(tflops):,.{int(tflops_digits)}f}"


@register.filter
def sci(value) -> str:
    return "–" if value is None else f"{float(value):.2e}"


@register.filter
def kib(value) -> str:
    if value is None:
        return "–"
    value = int(value)
    return f"{value} B" if value < 1024 else f"{value / 1024:.1f} KB"


@register.filter
def sizes(value, names=()) -> str:
    """{"M": 4096, "N": 4096, "K": 4096} -> "M=4096 N=4096 K=4096", in the problem's order of `names` (PostgreSQL's
    jsonb sorts keys); without names GEMM's M, N, K come first."""
    order = {name: index for index, name in enumerate(names or ("M", "N", "K"))}
    items = sorted((value or {}).items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
    return " ".join(f"{k}={v}" for k, v in items)


@register.filter
def status_badge(status) -> str:
    return _BADGE.get(status, "badge--muted")


@register.filter
def index_text(value) -> str:
    return "–" if value is None else "[" + ", ".join(str(v) for v in value) + "]"


_VERDICTS = {
    "accepted": "Accepted",
    "compiled": "Compiled",
    "source_rejected": "Source rejected",
    "compile_error": "Compile error",
    "plan_error": "Launch plan error",
    "wrong_answer": "Wrong answer",
    "runtime_error": "Runtime error",
    "timed_out": "Timed out",
    "crashed": "Crashed",
    "output_limit_exceeded": "Too much output",
    "internal_error": "Judge error",
}
_COMPILE_STAGE_FAILURES = {"source_rejected", "compile_error", "plan_error"}


@register.filter
def verdict_label(verdict) -> str:
    return _VERDICTS.get(verdict, str(verdict or "").replace("_", " ").capitalize())


@register.filter
def compile_failed(submission) -> bool:
    """Stopped before the GPU: the compiler's (or the screening's) log is the whole story."""
    return submission.verdict in _COMPILE_STAGE_FAILURES


@register.filter
def iqr(stats) -> float | None:
    if not stats or stats.get("q75_ms") is None or stats.get("q25_ms") is None:
        return None
    return stats["q75_ms"] - stats["q25_ms"]
