"""Imports go one way: down the floors. An app imports the apps on the floors below it, never one on
its own floor or above (lazy imports inside functions included). What an app needs from above, it
offers a hook for instead: a signal (accounts' users_deleting), a registry filled from AppConfig.ready
(catalog's book importers, accounts' account content), or a panel that the top floor composes.

Running this file is the import check: `pytest tests/test_layers.py`.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The floors, from the ground up. Floor 0 is not under apps/: config (settings, Celery) and the judge library, which
# import no app (the last tests below).
FLOORS = {
    "config": 0,
    "kernels": 0,
    "accounts": 1,  # the reader's account
    "catalog": 1,  # the book as data
    "subscriptions": 1,  # the Stripe mirror and complimentary access
    "reading": 2,  # the access policy, the reader, progress, search, EPUB
    "reviews": 3,  # ratings and reviews
    "submissions": 3,  # the judge's exercises and submissions
    "pages": 4,  # pages composed from several apps
    "demo": 4,  # demo data, written through every app's services
}
# Imports between two apps of one floor, allowed one way each: (importer, imported). None so far.
SIDEWAYS: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path):
    """(line, dotted module name) of every import in the file, at any depth; relative ones resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if module == "apps":  # from apps import reading
                for alias in node.names:
                    yield node.lineno, f"apps.{alias.name}"
            else:
                yield node.lineno, module


def _floor_of(module: str) -> tuple[str, int] | None:
    parts = module.split(".")
    if parts[0] == "apps" and len(parts) > 1:
        return parts[1], FLOORS.get(parts[1], -1)
    if parts[0] in ("config", "kernels"):
        return parts[0], 0
    return None  # the standard library, Django, other packages


def _app_files():
    return sorted((ROOT / "apps").glob("*/**/*.py"))


def test_every_app_has_a_floor():
    apps = {path.name for path in (ROOT / "apps").iterdir() if (path / "apps.py").exists()}
    assert apps <= FLOORS.keys(), f"give these apps a floor in tests/test_layers.py: {sorted(apps - FLOORS.keys())}"


def test_no_app_imports_one_on_its_floor_or_above():
    found = []
    for path in _app_files():
        app = path.relative_to(ROOT / "apps").parts[0]
        floor = FLOORS[app]
        for line, module in _imported_modules(path):
            target = _floor_of(module)
            if target is None or target[0] == app:
                continue
            other, other_floor = target
            if other_floor < floor or (other_floor == floor and (app, other) in SIDEWAYS):
                continue
            found.append(
                f"{path.relative_to(ROOT)}:{line} imports {module}: {app} (floor {floor}) may not import "
                f"{other} (floor {other_floor})"
            )
    assert not found, "imports that go up or sideways:\n" + "\n".join(found)


def test_the_judge_library_imports_no_app_and_no_settings():
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((ROOT / "kernels").rglob("*.py"))
        for line, module in _imported_modules(path)
        if module.split(".")[0] in ("apps", "config")
    ]
    assert not found, "\n".join(found)


def test_config_imports_no_app():
    """config is the ground floor that every app stands on: it names apps only as data (INSTALLED_APPS, URL includes,
    task routes), never imports one. What an app must set up early, it does from its AppConfig.ready (submissions
    connects the GPU worker's signals there)."""
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((ROOT / "config").rglob("*.py"))
        for line, module in _imported_modules(path)
        if module.split(".")[0] == "apps"
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from apps.reading.policy import can_read", "apps.reading.policy"),
        ("def f():\n    from apps.reviews import services", "apps.reviews"),
        ("from apps import pages", "apps.pages"),
        ("import apps.submissions.models", "apps.submissions.models"),
        ("from ..reading import selectors", "apps.reading"),
    ],
)
def test_the_check_sees_every_form_of_import(tmp_path, monkeypatch, source, expected):
    module = tmp_path / "apps" / "catalog" / "views.py"
    module.parent.mkdir(parents=True)
    module.write_text(source)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert [name for _, name in _imported_modules(module)] == [expected]
