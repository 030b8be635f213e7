"""Execute every notebook in notebooks/ at WORMHOLE_LAB_SCALE=smoke with nbmake and fail on any cell error; for
the notebooks in ``CHECKS``, also check what they printed.

Deselect with ``-m "not notebooks"``. Needs nbmake (the test extras install it); without it the tests skip
with a reason.
"""

import re
import time
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
MAX_BYTES = 1_000_000

pytestmark = pytest.mark.notebooks


def test_the_six_notebooks_are_there():
    names = [p.name for p in PATHS]
    for prefix in ("01_", "02_", "03_", "04_", "05_", "06_"):
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
    if path.stem in CHECKS:
        CHECKS[path.stem](result.nb)
    print(f"{path.name}: {time.perf_counter() - t0:.1f} s")


# --- what the notebooks printed, checked from the executed copy ----------------------------------------------


def _printed(nb, cell_id: str) -> str:
    """The text the code cell with id ``cell_id`` printed."""
    cells = [c for c in nb.cells if c.get("id") == cell_id]
    assert cells, f"no cell with id {cell_id!r}"
    return "".join(o.get("text", "") for o in cells[0].get("outputs", []) if o.get("output_type") == "stream")


def _slowdowns(text: str) -> dict[str, float]:
    """job name -> slowdown, from ``job_lines`` output (``job a  iterations 2 ... slowdown 1.055``)."""
    return {m[1]: float(m[2]) for m in re.finditer(r"^job (\S+) .* slowdown (\d+\.\d+)$", text, re.M)}


def check_06_interference(nb) -> None:
    """One slowdown per job and placement, all runs and alone runs in packet mode; packed jobs share no port and
    come out at exactly 1 (printed to the last bit, from repr); interleaved ones share ports and one of them is
    slowed; one background run per load, at 10, 30 and 50 %."""
    text = _printed(nb, "run")
    blocks = re.findall(r"^--- (\w+): \d+ flows, (\d+) ports carried data of both jobs\n((?:job .*\n)+)", text, re.M)
    shared = {placement: int(n) for placement, n, _ in blocks}
    slow = {placement: _slowdowns(lines) for placement, _, lines in blocks}
    assert sorted(slow) == ["interleaved", "packed", "random"], text
    assert all(sorted(s) == ["a", "b"] for s in slow.values()), slow  # one slowdown per job and placement
    assert shared["packed"] == 0 and shared["interleaved"] > 0, shared
    assert slow["packed"] == {"a": 1.0, "b": 1.0}, slow["packed"]  # printed 1.000; exactly 1 below
    assert max(slow["interleaved"].values()) > 1.0, slow["interleaved"]
    assert text.count("each job run by itself on the same GPUs, in packet mode") == 3, text  # exact alone runs
    exact = re.search(r"^packed, slowdowns to the last bit: \[(.*)\]$", _printed(nb, "table"), re.M)
    assert exact and [float(x) for x in exact[1].split(",")] == [1.0, 1.0], _printed(nb, "table")
    sweep = _printed(nb, "sweep")
    loads = dict(re.findall(r"^--- load (\d+)%\n((?:job .*\n)+)", sweep, re.M))
    assert list(loads) == ["10", "30", "50"], sweep
    assert all(sorted(_slowdowns(lines)) == ["background", "job"] for lines in loads.values()), sweep
    assert sweep.count("in packet mode") == 3, sweep


CHECKS = {"06_interference": check_06_interference}
