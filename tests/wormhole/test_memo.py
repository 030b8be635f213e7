"""The memo DB: hits reproduce the memo-off results, it persists, and a bad file is never trusted."""

import json
import sqlite3
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import rail_optimized, star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.llm import training_iteration
from wormhole_lab.workload.models import get_model, placement_for
from wormhole_lab.wormhole.memo import MemoWarning
from wormhole_lab.wormhole.settings import WormholeConfig


def incast_rounds(cca: str, senders: int = 2, size: int = 4_000_000, rounds: int = 6) -> Scenario:
    """Rounds of a ``senders``-to-1 incast, each round starting when the previous one finished: a repeating
    pattern."""
    src, deps = [], []
    for r in range(rounds):
        for k in range(1, senders + 1):
            src.append(k)
            deps.append(tuple(range(senders * (r - 1), senders * r)) if r else ())
    flows = make_flows(src, [0] * len(src), [size] * len(src), 0, deps=deps)
    return Scenario(star(senders + 1), flows, preset(cca), telemetry=Telemetry.off())


def entries(path) -> list[dict]:
    return [json.loads(v) for (v,) in sqlite3.connect(path).execute("SELECT value FROM entries ORDER BY id")]


@pytest.fixture(scope="module")
def rounds_scenario():
    return incast_rounds("dctcp")


def run(scenario, memo):
    return Simulation(replace(scenario, wormhole=WormholeConfig(memo=memo)), mode="wormhole").run()


@pytest.fixture(scope="module")
def memo_off(rounds_scenario):
    return run(rounds_scenario, None)


def test_memo_hits_give_the_memo_off_results_within_1_percent(rounds_scenario, memo_off, tmp_path):
    with_memo = run(rounds_scenario, str(tmp_path / "memo.sqlite"))
    assert with_memo.attrs["memo_hits"] >= 4 and with_memo.attrs["memo_inserts"] >= 1
    assert np.abs(with_memo["fct"].values / memo_off["fct"].values - 1).max() < 0.01
    assert with_memo["time_memo_fraction"].max() > 0
    assert with_memo.attrs["memo_db_bytes"] > 0


def test_by_default_a_run_memoizes_within_itself_deterministically_and_keeps_no_file(
    rounds_scenario, memo_off, tmp_path, monkeypatch
):
    """No memo option: the run's own memo DB, in a temporary folder removed at the end; the same scenario gives
    the same results twice (nothing carries over), and those of a fresh memo file."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    runs = [Simulation(rounds_scenario, mode="wormhole").run() for _ in range(2)]
    assert list(tmp_path.iterdir()) == []
    fresh_file = run(rounds_scenario, str(tmp_path / "memo.sqlite"))
    for ds in runs:
        assert ds.attrs["memo"] == "run" and ds.attrs["memo_hits"] >= 4 and ds.attrs["memo_db_bytes"] > 0
        np.testing.assert_array_equal(ds["fct"].values, fresh_file["fct"].values)
        assert ds.attrs["events_executed"] == fresh_file.attrs["events_executed"]
    assert memo_off.attrs["memo"] == "off" and runs[0].attrs["events_executed"] < memo_off.attrs["events_executed"]


def test_the_memo_setting_is_true_false_or_a_path():
    assert WormholeConfig().memo_kind == "run"
    assert WormholeConfig(memo=False).memo_kind == WormholeConfig(memo=None).memo_kind == "off"
    assert WormholeConfig(memo=Path("m.sqlite")).memo == "m.sqlite"
    for bad in ("", 3):
        with pytest.raises(InputError, match="WormholeConfig.memo"):
            WormholeConfig(memo=bad)


def test_flows_that_start_together_are_looked_up_once_as_one_partition(rounds_scenario, tmp_path):
    """Per round: one lookup when both flows start (at the same nanosecond); none when the first finishes, as the
    other has sent all it has then. Looked up flow by flow, the first flow's lone partition would be a lookup of
    its own, and a wasted one."""
    with_memo = run(rounds_scenario, str(tmp_path / "memo.sqlite"))
    assert with_memo.attrs["memo_lookups"] == 6


def test_a_jump_leaves_a_paced_flow_where_its_transient_left_it(tmp_path):
    """MoE-8x7B with 2 layers on 64 GPUs, HPCC: each expert all-to-all after the first is a hit. A jump that
    credited the bytes acknowledged during the transient, not those sent, lost the pipe the transient had
    filled: every jumped flow came out about 1 % slow (mean 1.07 % against memo off; now 0.07 %)."""
    flows = training_iteration(get_model("MoE-8x7B").replace(layers=2), placement_for("MoE-8x7B", 64))
    scenario = Scenario(rail_optimized(8, 8), flows, preset("hp"), telemetry=Telemetry.off())
    with_memo = run(scenario, str(tmp_path / "memo.sqlite"))
    assert with_memo.attrs["memo_hits"] >= 100
    error = with_memo["fct"].values / run(scenario, None)["fct"].values - 1
    assert np.abs(error).mean() < 0.003 and abs(error.mean()) < 0.002


def test_a_hit_goes_on_as_a_fast_forward_at_the_stored_goodput(rounds_scenario, memo_off, tmp_path):
    """A stored transient ends steady: after the jump the partition is skipped on at once, not re-qualified
    over another steady-test window, and the results stay those of the memo-off run."""
    sim = Simulation(replace(rounds_scenario, wormhole=WormholeConfig(memo=str(tmp_path / "m.sqlite"))), "wormhole")
    ds = sim.run()
    hits = [s for s in sim.controller.ff.log if s.memo_until > s.start]
    assert len(hits) == ds.attrs["memo_hits"] >= 4
    assert all(s.end > s.memo_until for s in hits)
    assert ds.attrs["events_executed"] < 0.8 * memo_off.attrs["events_executed"]  # re-qualifying: 0.96x
    assert np.abs(ds["fct"].values / memo_off["fct"].values - 1).max() < 0.01


def test_the_db_persists_between_runs_and_stores_each_pattern_once(rounds_scenario, tmp_path):
    path = str(tmp_path / "memo.sqlite")
    first = run(rounds_scenario, path)
    second = run(rounds_scenario, path)
    assert second.attrs["memo_hits"] >= 5
    rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    assert rows == first.attrs["memo_inserts"] >= 1
    assert second.attrs["memo_inserts"] == 0  # every pattern of the second run was stored by the first


def test_a_pattern_seen_in_two_places_at_once_is_stored_once(tmp_path):
    """Two disjoint 2-to-1 incasts in each of four rounds: both instances of the first round miss and converge,
    but only the first is stored (several alike would only lengthen every later lookup)."""
    deps = [tuple(range(4 * (r - 1), 4 * r)) if r else () for r in range(4) for _ in range(4)]
    flows = make_flows([1, 2, 4, 5] * 4, [0, 0, 3, 3] * 4, [4_000_000] * 16, 0, deps=deps)
    path = tmp_path / "memo.sqlite"
    ds = run(Scenario(star(6), flows, preset("dctcp"), telemetry=Telemetry.off()), str(path))
    assert ds.attrs["memo_hits"] >= 6
    rows, keys = sqlite3.connect(path).execute("SELECT COUNT(*), COUNT(DISTINCT fcg_key) FROM entries").fetchone()
    assert rows == keys >= 1


def test_a_garbage_file_is_reported_and_the_run_goes_on_without_it(rounds_scenario, memo_off, tmp_path):
    path = tmp_path / "memo.sqlite"
    path.write_bytes(b"this is not an sqlite database" * 100)
    with pytest.warns(MemoWarning, match="unreadable"):
        ds = run(rounds_scenario, str(path))
    assert ds.attrs["memo_usable"] == 0
    np.testing.assert_array_equal(ds["fct"].values, memo_off["fct"].values)


def test_a_foreign_schema_is_not_used(rounds_scenario, memo_off, tmp_path):
    path = tmp_path / "memo.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '999')")
    conn.commit()
    conn.close()
    with pytest.warns(MemoWarning, match="schema 999"):
        ds = run(rounds_scenario, str(path))
    np.testing.assert_array_equal(ds["fct"].values, memo_off["fct"].values)


def test_a_tampered_entry_fails_its_checksum_and_is_skipped(rounds_scenario, memo_off, tmp_path):
    path = str(tmp_path / "memo.sqlite")
    run(rounds_scenario, path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE entries SET value = replace(value, '\"t_conv\": ', '\"t_conv\": 9')")
    conn.commit()
    conn.close()
    with pytest.warns(MemoWarning, match="failed its checksum"):
        ds = run(rounds_scenario, path)
    assert ds.attrs["memo_bad_entries"] > 0
    assert np.abs(ds["fct"].values / memo_off["fct"].values - 1).max() < 0.01


@pytest.mark.parametrize(("tail", "early_ps"), [(1, 10_000), (4, 0)])
def test_a_partition_that_changes_before_it_settles_is_taken_from_the_memo_db(tail, early_ps, tmp_path):
    """Four rounds of one 300 kB flow: it lasts 26 us, half the 50 us HPCC window, so it never settles. The first
    round stores its outcome up to where the flow nears its end (its mark, two tails before it); each later round
    takes it from there, to the packet: the bytes credited are the stored bytes, the flow sends only the rest, and
    ends as the stored round did. With a 4-packet tail the 8 packets after the hit refill the pipe as the stored
    round's were, and the round ends to the picosecond; with the default 1, 4 ns (a twentieth of a packet's time)
    early, as the packet in flight at the partition's start is carried along rather than a full pipe."""
    scenario = incast_rounds("hp", senders=1, size=300_000, rounds=4)
    path = tmp_path / "memo.sqlite"
    sim = Simulation(replace(scenario, wormhole=WormholeConfig(memo=str(path), tail_packets=tail)), mode="wormhole")
    ds = sim.run()
    (stored,) = entries(path)
    assert stored["settled"] is False and ds.attrs["skips"] == 0
    assert ds.attrs["memo_hits"] == 3
    payload = preset("hp").payload_bytes
    credit = stored["flows"][0]["bytes"] // payload * payload
    assert 300_000 - (2 * tail + 2) * payload <= credit < 300_000 - tail * payload  # the tail is left to packet mode
    np.testing.assert_array_equal(ds["skipped_bytes"].values[1:], credit)
    np.testing.assert_array_equal(sim.controller.state.fl[1:, L.FL_PKTS_SENT] * payload + credit, 300_000)
    early = ds["fct"].values[0] - ds["fct"].values[1:]  # against the stored round
    assert (early >= 0).all() and early.max() <= early_ps
    packet = Simulation(scenario, mode="packet").run()  # whose rounds differ by up to 63 ns (0.2 %)
    assert np.abs(ds["fct"].values / packet["fct"].values - 1).max() < 0.003


def test_an_incast_that_splits_its_port_unevenly_before_settling_is_not_stored(tmp_path):
    """Two 1 MB DCQCN flows into one host split it by chance (141 / 463 us in one round, 383 / 411 us in the
    next): no outcome of both is stored, and the rounds run as without a memo DB."""
    scenario = incast_rounds("dcqcn", size=1_000_000, rounds=4)
    path = tmp_path / "memo.sqlite"
    ds = run(scenario, str(path))
    assert all(len(entry["flows"]) == 1 for entry in entries(path))
    np.testing.assert_array_equal(ds["fct"].values, run(scenario, None)["fct"].values)


@pytest.mark.parametrize("cca", ["dctcp", "timely"])
def test_a_hit_credits_the_bytes_that_left_the_queues(cca, tmp_path):
    """2 x 700 kB into one host: each hit after the first round credits what its transient sent, less what sat in
    queues at its end. Crediting what was sent put every hit 48 % early under TIMELY (its incast queues 370 kB
    per flow); crediting what was acknowledged 3.5 % late under DCTCP (a window in flight, not a queue)."""
    scenario = incast_rounds(cca, size=700_000, rounds=4)
    ds = run(scenario, str(tmp_path / "memo.sqlite"))
    assert ds.attrs["memo_hits"] >= 3
    packet = Simulation(scenario, mode="packet").run()
    assert np.abs(ds["fct"].values / packet["fct"].values - 1).max() < 0.01  # measured 0.25 % / 0.9 %


def test_an_outcome_is_stored_before_it_settles_only_when_a_member_nears_its_end(tmp_path, monkeypatch):
    """The two HPCC flows left of a 3-to-1 incast form a partition mid-flight at 595 us (watched, not marked: it
    may be stored only once settled) while a lone 300 kB flow elsewhere, started at 600 us, passes its mark at
    626 us: that mark must not store the incast's partition."""
    from wormhole_lab.wormhole import controller

    flows = make_flows([1, 2, 3, 4], [0, 0, 0, 5], [2_000_000, 6_000_000, 6_000_000, 300_000], [0, 0, 0, 600_000_000])
    scenario = Scenario(star(6), flows, preset("hp"), telemetry=Telemetry.off())
    stored_early = []
    record = controller.WormholeController._record

    def checked(self, part, now, settled):
        fl, members = self.state.fl, self.pending[part].ids.tolist()
        left = fl[members, L.FL_SIZE] - self.state.fw[fl[members, L.FL_SLOT], L.FW_SND_NXT]
        if not settled and left.min() > controller.MARK_TAILS * self.ff.tail_bytes:
            stored_early.append(sorted(members))
        return record(self, part, now, settled)

    monkeypatch.setattr(controller.WormholeController, "_record", checked)
    run(scenario, str(tmp_path / "memo.sqlite"))
    (lone,) = [entry for entry in entries(tmp_path / "memo.sqlite") if not entry["settled"]]
    assert len(lone["flows"]) == 1  # the lone flow, at its mark
    assert stored_early == []
