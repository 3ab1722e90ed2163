"""LaTeX as plain text, for the capsule text that search indexes and shows in snippets (and counts as words):
`\\frac{M N K}{t} \\times 10^{-12}` reads "(M N K)/(t) × 10^(-12)" there instead of its source. The page itself shows
MathML; this is only the text beside it."""

import re

SYMBOLS = {
    "times": "×", "cdot": "·", "approx": "≈", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠",
    "pm": "±", "infty": "∞", "sum": "Σ", "prod": "Π", "partial": "∂", "in": "∈", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "Rightarrow": "⇒", "mapsto": "↦", "equiv": "≡", "oplus": "⊕", "odot": "⊙", "gtrsim": "≳",
    "lesssim": "≲", "ll": "≪", "gg": "≫", "dots": "…", "ldots": "…", "cdots": "⋯", "ell": "ℓ", "top": "ᵀ",
    "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋", "lt": "<", "gt": ">",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "eta": "η",
    "theta": "θ", "lambda": "λ", "mu": "μ", "pi": "π", "sigma": "σ", "tau": "τ", "phi": "φ", "omega": "ω",
    "Theta": "Θ", "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω",
}  # fmt: skip
# Commands that only space, size or style what follows: dropped, their argument kept.
DROPPED = re.compile(
    r"\\(?:left|right|big|Big|bigg|Bigg|quad|qquad|displaystyle|mathrel|mathbb|mathbf|mathrm|mathit|"
    r"operatorname|text|textbf|textit|tilde|hat|bar|underbrace|overbrace|limits|nolimits)\b\s*(?:\{([^{}]*)\})?"
)
FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
GROUPED_SCRIPT = re.compile(r"([_^])\{([^{}]*)\}")
SQUARE_ROOT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")


def latex_as_text(latex: str) -> str:
    text = latex.replace("\\,", " ").replace("\\;", " ").replace("\\!", "").replace("\\ ", " ")
    text = re.sub(r"\\([A-Za-z]+)\b", lambda m: SYMBOLS.get(m.group(1), m.group(0)), text)
    for _ in range(6):  # innermost groups first: \text{} and b_{i} inside \frac{}{}, fractions in fractions
        before = text
        text = DROPPED.sub(lambda m: m.group(1) or "", text)
        text = GROUPED_SCRIPT.sub(lambda m: m.group(1) + _wrap(m.group(2)), text)
        text = FRACTION.sub(lambda m: f"{_wrap(m.group(1))}/{_wrap(m.group(2))}", text)
        text = SQUARE_ROOT.sub(lambda m: "√" + _wrap(m.group(1)), text)
        if text == before:
            break
    text = re.sub(r"\\bmod\b", " mod ", text)
    text = re.sub(r"\\pmod\s*\{([^{}]*)\}", r" (mod \1)", text)
    text = re.sub(r"\\(min|max|log|ln|exp|gcd|sin|cos)\b", r"\1", text)
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)  # any other command: its name
    text = text.replace("{", "").replace("}", "").replace("\\\\", " ")
    text = re.sub(r"\s*_\s*", "_", text)
    return re.sub(r"\s+", " ", text).strip()


def _wrap(part: str) -> str:
    part = part.strip()
    return part if len(part) == 1 or re.fullmatch(r"[\w.]+", part) else f"({part})"
