"""Execute every notebook in notebooks/ at WORMHOLE_LAB_SCALE=smoke and fail on any cell error.

Deselect with ``-m "not notebooks"``. Needs nbclient, nbformat and ipykernel (``pip install nbmake`` brings
all three); without them the tests skip with a reason.
"""

import os
import time
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
MAX_BYTES = 1_000_000

pytestmark = pytest.mark.notebooks


def _kernel_packages():
    try:
        import ipykernel  # noqa: F401
        import nbclient
        import nbformat
    except ImportError as exc:
        pytest.skip(f"notebook kernel packages missing ({exc.name}); pip install nbclient nbformat ipykernel")
    return nbclient, nbformat


def test_the_five_notebooks_are_there():
    names = [p.name for p in PATHS]
    for prefix in ("01_", "02_", "03_", "04_", "05_"):
        assert any(n.startswith(prefix) for n in names), f"no notebook {prefix}*.ipynb in {NOTEBOOKS}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_committed_small(path):
    assert path.stat().st_size < MAX_BYTES, f"{path.name} is {path.stat().st_size:,} bytes; clear its outputs"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_at_smoke_scale(path, monkeypatch):
    nbclient, nbformat = _kernel_packages()
    monkeypatch.setenv("WORMHOLE_LAB_SCALE", "smoke")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    t0 = time.perf_counter()
    try:
        client.execute(cwd=str(NOTEBOOKS), env=dict(os.environ))
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell failed\n{exc}", pytrace=False)
    print(f"{path.name}: {time.perf_counter() - t0:.1f} s")
