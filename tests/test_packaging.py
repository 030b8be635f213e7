"""What a fresh ``pip install ".[test]"`` gives is enough: every module imports, and every import of the package,
the apps and the tests is a declared dependency (so a missing one fails here, not on a user's machine)."""

import ast
import functools
import importlib
import importlib.metadata
import pkgutil
import re
import sys
import tomllib
from pathlib import Path

import pytest

import wormhole_lab

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
FIRST_PARTY = {"wormhole_lab", "memo_workers", "conftest", "test_jupyterlab"}  # the last: its JupyterLab set-up, reused


def _names(requirements) -> set[str]:
    """Distribution names of requirement strings, normalised as PyPI does."""
    return {re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", r).group(0)).lower() for r in requirements}


def _imported_top_levels(folder: Path) -> dict[str, str]:
    """Top-level module name -> the first file:line importing it, over every .py file under ``folder``."""
    found = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


_distributions = functools.cache(importlib.metadata.packages_distributions)


def _undeclared(folder: Path, declared: set[str]) -> list[str]:
    distributions = _distributions()
    missing = []
    for module, where in _imported_top_levels(folder).items():
        if module in sys.stdlib_module_names or module in FIRST_PARTY or (folder / f"{module}.py").is_file():
            continue  # the standard library, the project, or a sibling module (benchmarks share helpers)
        dists = _names(distributions.get(module, [module]))
        if not dists & declared:
            missing.append(f"{module} ({where}; distribution {', '.join(sorted(dists))})")
    return missing


def test_every_module_of_the_package_imports():
    modules = [m.name for m in pkgutil.walk_packages(wormhole_lab.__path__, "wormhole_lab.")]
    assert "wormhole_lab.engine.kernel" in modules and "wormhole_lab.viz.explore_app" in modules
    for name in modules:
        importlib.import_module(name)


@pytest.mark.parametrize("folder", ["wormhole_lab", "widgets"])
def test_every_import_is_a_declared_dependency(folder):
    declared = _names(PYPROJECT["project"]["dependencies"])
    assert _undeclared(ROOT / folder, declared) == []


@pytest.mark.parametrize("folder", ["tests", "benchmarks"])
def test_every_test_and_benchmark_import_is_declared_in_the_test_extra(folder):
    """Benchmarks run where the test extras are installed: bench_live.py --browser drives Chromium as the tests do."""
    declared = _names(PYPROJECT["project"]["dependencies"] + PYPROJECT["project"]["optional-dependencies"]["test"])
    assert _undeclared(ROOT / folder, declared) == []


def test_the_check_notices_an_undeclared_import(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "m.py").write_text("import numpy\nfrom yaml import safe_load\n", encoding="utf-8")
    assert _undeclared(tmp_path, {"numpy"}) == ["yaml (m.py:2; distribution pyyaml)"]


def test_upper_bounds_carry_a_reason():
    """A cap keeps users off newer releases; pyproject must say why beside it (a comment on the same line)."""
    lines = (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines()
    capped = [line for line in lines if re.search(r'^\s*"[^"]*<[^"]*",', line)]
    assert all("#" in line.split('",', 1)[1] for line in capped), capped
