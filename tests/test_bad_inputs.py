"""The bad-input corpus (tests/data/bad/): every malformed or hostile file gives a clear InputError.

Clear means: the type is InputError (no IndexError, KeyError, OverflowError or Numba traceback from the
internals), the message names the file and line (or the field), matches what tests/data/bad/README.md
expects for that file, and says how to fix it. The reader is chosen by the file name's prefix; readers
that accept a file hand it on (config -> prepare, SimAI -> simai_flows, scenario -> prepare) so that a
value that would only blow up later is caught too.
"""

import re
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.ns3_config import read_ns3_config
from wormhole_lab.ns3_run import ns3_scenario
from wormhole_lab.scenario_io import load_scenario
from wormhole_lab.simulation import Scenario, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.topology.hpcc_format import read_topology
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.hpcc_flow_format import read_flows
from wormhole_lab.workload.htsim_cm import read_cm
from wormhole_lab.workload.simai import read_simai, simai_flows

BAD = Path(__file__).resolve().parent / "data" / "bad"
README = BAD / "README.md"
_ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| (?P<note>.*) \| `(?P<expected>.*)` \|$")
_INTERNALS = ("Traceback", "numba", 'File "', "IndexError", "KeyError", "OverflowError", "site-packages")


def _cases() -> list[tuple[str, str]]:
    rows = [m for line in README.read_text().splitlines() if (m := _ROW.match(line))]
    return [(m["file"], m["expected"]) for m in rows]


CASES = _cases()


def _config(path: Path):
    cfg = read_ns3_config(path)
    flows = make_flows([1, 2], [0, 0], [10_000, 10_000], 0)
    prepare(Scenario(star(3), flows, cfg.engine, telemetry=Telemetry.off()))


def _simai(path: Path):
    simai_flows(read_simai(path))


def _scenario(path: Path):
    prepare(load_scenario(path))


def _ns3(path: Path, monkeypatch):
    monkeypatch.chdir(path.parent)  # the reference reads its files relative to the working directory
    scenario, _ = ns3_scenario(path.name)
    prepare(scenario)


READERS = {
    "topo_": read_topology,
    "flow_": read_flows,
    "config_": _config,
    "simai_": _simai,
    "cm_": read_cm,
    "scenario_": _scenario,
}


def _load(name: str, monkeypatch):
    path = BAD / name
    if name.startswith("ns3_"):
        return _ns3(path, monkeypatch)
    prefix = next(p for p in READERS if name.startswith(p))
    return READERS[prefix](path)


def assert_clear(exc: InputError, expected: str | None = None) -> None:
    """The common definition of a clear error."""
    assert type(exc) is InputError, f"{type(exc).__name__} instead of InputError: {exc}"
    message = str(exc)
    assert re.search(r"\.(txt|cm|yaml)\b", exc.where), f"the location does not name a file: {exc.where!r}"
    has_line = re.search(r":\d+$", exc.where) is not None
    has_flow = re.search(r"\[\d+\]$", exc.where) is not None
    names_field = re.search(r"\b[A-Z][A-Z0-9_]{2,}\b|\b[a-z_]+(\.[a-z_]+)+:", exc.problem) is not None
    assert has_line or has_flow or names_field, f"names neither a line nor a field: {message}"
    assert exc.fix.strip(), f"no fix given: {message}"
    for word in _INTERNALS:
        assert word not in message, f"internal detail {word!r} in the message: {message}"
    if expected is not None:
        assert re.search(expected, message), f"expected /{expected}/, got: {message}"


def test_the_corpus_is_large_and_listed_in_the_readme():
    listed = {name for name, _ in CASES}
    on_disk = {
        p.relative_to(BAD).as_posix()
        for p in BAD.rglob("*")
        if p.is_file()
        and p.name != "README.md"
        and p.parent.name != "support"
        and not (p.parent != BAD and p.name != "config.txt")  # ns3_* folders: config.txt is the case
    }
    assert listed == on_disk, f"not in README: {sorted(on_disk - listed)}; missing: {sorted(listed - on_disk)}"
    assert len(CASES) >= 45
    for prefix in (*READERS, "ns3_"):
        assert any(name.startswith(prefix) for name in listed), prefix


@pytest.mark.parametrize(("name", "expected"), CASES, ids=[name for name, _ in CASES])
def test_bad_input_gives_a_clear_error(name, expected, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # readers may warn before they fail; the error is what counts
        with pytest.raises(Exception) as info:
            _load(name, monkeypatch)
    assert_clear(info.value, expected)


def _million_flows(path: Path, count: int, last_line: str) -> None:
    n = 10**6
    src = np.arange(n) % 7 + 1
    body = "\n".join(f"{s} 0 3 100 1000 0.0" for s in src[:-1].tolist())
    path.write_text(f"{count}\n{body}\n{last_line}\n")


@pytest.mark.parametrize(
    ("last_line", "expected"),
    [
        ("3 0 3 100 1000", r"flows\.txt:1000001: expected 6 columns, found 5"),
        ("3 0 3 100 1000 0.0x", r"flows\.txt:1000001: start time '0\.0x' is not a number"),
        ("3 0 3 100 -1000 0.0", r"flows\.txt:1000001: size -1000 B must be positive"),
    ],
)
def test_a_million_flow_file_broken_on_its_last_line(tmp_path, last_line, expected):
    path = tmp_path / "flows.txt"
    _million_flows(path, 10**6, last_line)
    t0 = time.perf_counter()
    with pytest.raises(InputError) as info:
        read_flows(path)
    assert_clear(info.value, expected)
    assert time.perf_counter() - t0 < 30


def test_a_million_flow_file_with_one_line_missing(tmp_path):
    path = tmp_path / "flows.txt"
    _million_flows(path, 10**6 + 1, "3 0 3 100 1000 0.0")
    with pytest.raises(InputError) as info:
        read_flows(path)
    assert_clear(info.value, r"flows\.txt:1: line 1 declares 1000001 flows but only 1000000 flow lines follow")
