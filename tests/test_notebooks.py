"""Execute every notebook in notebooks/ at WORMHOLE_LAB_SCALE=smoke with nbmake and fail on any cell error.

Deselect with ``-m "not notebooks"``. Needs nbmake (the test extras install it); without it the tests skip
with a reason.
"""

import time
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
MAX_BYTES = 1_000_000

pytestmark = pytest.mark.notebooks


def test_the_five_notebooks_are_there():
    names = [p.name for p in PATHS]
    for prefix in ("01_", "02_", "03_", "04_", "05_"):
        assert any(n.startswith(prefix) for n in names), f"no notebook {prefix}*.ipynb in {NOTEBOOKS}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_committed_small(path):
    assert path.stat().st_size < MAX_BYTES, f"{path.name} is {path.stat().st_size:,} bytes; clear its outputs"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_at_smoke_scale(path, monkeypatch):
    nb_run = pytest.importorskip("nbmake.nb_run", reason="pip install nbmake")
    monkeypatch.setenv("WORMHOLE_LAB_SCALE", "smoke")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    t0 = time.perf_counter()
    result = nb_run.NotebookRun(path, default_timeout=300).execute()  # in the notebook's folder, this env
    if result.error is not None:
        cell = result.error.failing_cell_index
        pytest.fail(f"{path.name}: cell {cell} failed: {result.error.summary}\n{result.error.trace}", pytrace=False)
    print(f"{path.name}: {time.perf_counter() - t0:.1f} s")
