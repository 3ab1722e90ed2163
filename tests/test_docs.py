"""The README says what is true of the code: the judge's problems, the sections the site and the code cite."""

import re
from pathlib import Path

from kernels import available_problems

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_readme_lists_every_judge_problem_and_no_other():
    table = README[README.index("| problem | what the kernel computes | baseline |") :]
    table = table[: table.index("\n\n")]
    listed = re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.M)
    assert sorted(listed) == sorted(available_problems()) and len(listed) == len(set(listed)) == 14
    assert "the 14 problems" in README


def test_every_readme_section_that_the_code_cites_exists():
    headings = {line.lstrip("#").strip() for line in README.splitlines() if line.startswith("#")}
    cited = set()
    for path in [*ROOT.glob("apps/**/*.py"), *ROOT.glob("templates/**/*.html"), *ROOT.glob("config/**/*.py")]:
        text = path.read_text()
        # README, "Operators" / README.md, "Operators" / the README's “Configuration” / README: Subscriptions
        # (not kernels/README.md's, nor content/README.md's: their own files)
        for pattern in (
            r'(?<![/\w])README(?:\.md)?, "([^"]+)"',
            r"(?<![/\w])README's “([^”]+)”",
            r"(?<![/\w])README: ([A-Z][A-Za-z ()]+?)[,)]",
        ):
            cited |= {(name.strip(), path.name) for name in re.findall(pattern, text)}
    assert cited, "the patterns found no citation at all"
    missing = sorted((name, where) for name, where in cited if name not in headings)
    assert not missing, missing
