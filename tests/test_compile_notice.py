"""A first run says it compiles the engine, once, and how long it took; a cached engine loads silently.

Compiling for real with an empty cache takes about a minute, so the detector is tested against a temporary cache
folder holding one small kernel, and the notice with the detector's answer replaced."""

import importlib
import json
import sys
import textwrap

import numba
import pytest

from wormhole_lab import compile_notice, simulation
from wormhole_lab.cli import main
from wormhole_lab.engine import kernel as engine_kernel
from wormhole_lab.simulation import Simulation, compile_kernels


@pytest.fixture
def small_kernel(tmp_path, monkeypatch):
    """A ``@njit(cache=True)`` kernel in its own source file, cached in ``tmp_path / "cache"`` and run once."""
    source = tmp_path / "src" / "notice_probe.py"
    source.parent.mkdir()
    source.write_text(
        textwrap.dedent("""
        import numba

        @numba.njit(cache=True)
        def twice(x):
            return 2 * x
    """)
    )
    cache = tmp_path / "cache"
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(cache))  # read when the function is decorated
    monkeypatch.syspath_prepend(str(source.parent))
    sys.modules.pop("notice_probe", None)
    module = importlib.import_module("notice_probe")
    assert module.twice(21) == 42
    yield module.twice, source, cache
    sys.modules.pop("notice_probe", None)


def test_an_empty_or_missing_cache_folder_is_cold(tmp_path):
    assert compile_notice.needs_compile("packet", tmp_path)
    assert compile_notice.needs_compile("packet", tmp_path / "not-there")


def test_the_kernels_that_ran_make_it_warm_until_their_index_files_go(small_kernel):
    twice, _, cache = small_kernel
    assert compile_notice.needs_compile("packet", cache)  # index files alone, no marker: cold
    assert compile_notice.record_compiled("packet", cache, [twice])
    assert not compile_notice.needs_compile("packet", cache)
    assert compile_notice.needs_compile("wormhole", cache)  # each mode has its own kernels
    (index,) = cache.rglob("*.nbi")
    index.unlink()
    assert compile_notice.needs_compile("packet", cache)


def test_an_edited_kernel_source_makes_it_cold(small_kernel):
    twice, source, cache = small_kernel
    compile_notice.record_compiled("packet", cache, [twice])
    source.write_text(source.read_text().replace("2 * x", "3 * x"))
    assert compile_notice.needs_compile("packet", cache)


@pytest.mark.parametrize("changed", ["_versions", "_machine"])
def test_another_numba_python_or_cpu_makes_it_cold(small_kernel, monkeypatch, changed):
    twice, _, cache = small_kernel
    compile_notice.record_compiled("packet", cache, [twice])
    monkeypatch.setattr(compile_notice, changed, lambda: {"numba": "0.1"})
    assert compile_notice.needs_compile("packet", cache)


def test_no_marker_when_numba_saved_no_index_file(small_kernel):
    twice, _, cache = small_kernel
    for index in cache.rglob("*.nbi"):
        index.unlink()
    assert not compile_notice.record_compiled("packet", cache, [twice])
    assert not compile_notice.marker_path("packet", cache).exists()
    assert compile_notice.needs_compile("packet", cache)


def test_a_corrupt_marker_is_cold(tmp_path):
    compile_notice.marker_path("packet", tmp_path).write_text("{not json")
    assert compile_notice.needs_compile("packet", tmp_path)


def test_the_engine_run_records_its_entry_kernel(tmp_path):
    compile_kernels("packet")
    loop = engine_kernel.run_until_packet_dcqcn  # packet mode, DCQCN: kernel.event_loop
    assert loop in compile_notice.loaded_kernels()
    assert compile_notice.record_compiled("packet", tmp_path)
    assert not compile_notice.needs_compile("packet", tmp_path)
    marker = json.loads(compile_notice.marker_path("packet", tmp_path).read_text())
    assert loop._cache._cache_file._index_path in marker["kernels"]


def test_each_cca_but_dcqcn_has_its_own_marker():
    """A run compiles its own CCA's event loop only: a DCQCN run's marker does not make an HPCC run warm."""
    assert compile_notice.kernels_key("packet", "dcqcn") == "packet"
    assert compile_notice.kernels_key("wormhole", "hpcc") == "wormhole-hpcc"
    assert compile_notice.kernels_key("flow", "hpcc") == "flow"  # no CCA in flow mode
    assert compile_notice.cold_message("packet-hpcc") == compile_notice.cold_message("packet")


@pytest.fixture
def cold(monkeypatch):
    """``cold(True/False)``: the detector's answer; nothing is recorded, and no mode was announced yet."""
    monkeypatch.setattr(compile_notice, "record_compiled", lambda *a, **k: True)
    monkeypatch.setattr(compile_notice, "_announced", set())

    def set_cold(answer: bool):
        monkeypatch.setattr(compile_notice, "needs_compile", lambda mode="packet", cache_dir=None: answer)

    return set_cold


def notices(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("wormhole-lab: compil")]


def test_a_cold_run_says_once_that_it_compiles_and_how_long_it_took(cold, incast, capsys):
    cold(True)
    Simulation(incast(2, 20_000)).run()
    lines = notices(capsys.readouterr().err)
    assert lines[0] == compile_notice.cold_message("packet", compile_notice.COLD_SECONDS["packet"])
    assert "compiling the simulation engine for this machine, once (about" in lines[0]
    assert lines[1].startswith("wormhole-lab: compiled in ") and lines[1].endswith(" s")
    assert len(lines) == 2
    Simulation(incast(2, 20_000)).run()  # compiled in this process: said once
    assert notices(capsys.readouterr().err) == []


def test_wormhole_mode_after_a_packet_run_estimates_its_own_kernels_only(monkeypatch):
    monkeypatch.setattr(compile_notice, "needs_compile", lambda mode="packet", cache_dir=None: mode != "packet")
    assert (
        compile_notice._estimate("wormhole")
        == compile_notice.COLD_SECONDS["wormhole"] - compile_notice.COLD_SECONDS["packet"]
    )
    # the packet run was DCQCN's: a Wormhole run with HPCC compiles HPCC's event loops, both
    assert compile_notice._estimate("wormhole-hpcc") == compile_notice.COLD_SECONDS["wormhole"]
    monkeypatch.setattr(compile_notice, "needs_compile", lambda mode="packet", cache_dir=None: True)
    assert "about a minute on 2 cores" in compile_notice.cold_message("wormhole", compile_notice._estimate("wormhole"))


def test_a_warm_run_says_nothing(cold, incast, capsys):
    cold(False)
    Simulation(incast(2, 20_000)).run()
    assert "wormhole-lab" not in capsys.readouterr().err


def test_wormhole_mode_says_it_once_though_its_compile_runs_a_simulation(cold, incast, capsys, monkeypatch):
    cold(True)
    monkeypatch.setattr(simulation, "_wormhole_compiled", set())  # its compile runs a Simulation of its own
    Simulation(incast(2, 20_000), mode="wormhole").run()
    assert len(notices(capsys.readouterr().err)) == 2


@pytest.mark.parametrize("quiet", [[], ["--quiet"]])
def test_the_command_line_says_it_before_the_progress_bar(cold, tmp_path, capsys, quiet):
    cold(True)
    assert main(["run", "--out", str(tmp_path), *quiet]) == 0
    err = capsys.readouterr().err
    assert len(notices(err)) == 2
    if not quiet:
        assert err.index(compile_notice.cold_message("packet")) < err.index("compiled in") < err.index("packet:")


def test_the_command_line_is_silent_when_warm(cold, tmp_path, capsys):
    cold(False)
    assert main(["run", "--out", str(tmp_path)]) == 0
    assert notices(capsys.readouterr().err) == []
