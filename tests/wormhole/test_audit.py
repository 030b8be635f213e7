"""The self-audit: sampled skips re-simulated packet by packet, and the error estimate it gives a run."""

from dataclasses import replace

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Scenario, Simulation, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole import fastforward
from wormhole_lab.wormhole.audit import Auditor, WeightedReservoir
from wormhole_lab.wormhole.settings import WormholeConfig

from .test_memo import incast_rounds


@pytest.fixture(scope="module")
def lone_flows():
    """Two HPCC flows that share no link (20 and 10 MB): each steady at line rate, each fast-forwarded once, so
    Wormhole mode is exact to 0.1 % here."""
    flows = make_flows([0, 2], [1, 3], [20_000_000, 10_000_000], 0)
    return Scenario(star(4), flows, preset("hp"), telemetry=Telemetry.off())


def audited(scenario, k=8, **wormhole):
    return Simulation(replace(scenario, wormhole=WormholeConfig(**wormhole)), mode="wormhole", audit=k).run()


def test_a_correct_run_audits_below_half_a_percent_and_is_not_changed_by_the_audit(lone_flows):
    ds = audited(lone_flows)
    plain = Simulation(lone_flows, mode="wormhole").run()
    assert ds.attrs["audit_fastforwards"] >= 2 and ds.sizes["audit"] == ds.attrs["audit_fastforwards"]
    assert (ds["audit_kind"].values == "fastforward").all()
    assert ds.attrs["audit_fastforward_error"] < 0.005 and ds["audit_error"].max() < 0.005
    assert 0 < ds.attrs["audit_fct_error_estimate"] < 0.005
    assert (ds["fct"].values == plain["fct"].values).all()
    assert ds.attrs["events_executed"] == plain.attrs["events_executed"]  # replays run on a copy


def test_a_skip_that_credits_5_percent_too_many_bytes_is_audited_at_about_5_percent(lone_flows, monkeypatch):
    monkeypatch.setattr(fastforward, "CREDIT_SCALE", 1.05)
    ds = audited(lone_flows)
    assert ds.attrs["audit_fastforwards"] >= 2
    assert np.all((ds["audit_signed_error"].values > 0.04) & (ds["audit_signed_error"].values < 0.06))
    assert 0.04 < ds.attrs["audit_fastforward_error"] < 0.06
    # the flows spent most of their lives fast-forwarded, so most of that error reaches its FCT estimate
    assert 0.025 < ds.attrs["audit_fct_error_estimate"] < 0.06


def test_the_audit_repeats_for_the_same_seed(lone_flows):
    first, second = audited(lone_flows, k=2), audited(lone_flows, k=2)
    assert first.sizes["audit"] == 2
    for name in ("audit_start", "audit_end", "audit_simulated_bytes", "audit_error"):
        assert (first[name].values == second[name].values).all()


def test_memo_hits_are_audited_against_their_stored_transient(tmp_path):
    scenario = incast_rounds("dctcp")
    ds = audited(scenario, k=3, memo=str(tmp_path / "memo.sqlite"))
    assert ds.attrs["memo_hits"] >= 4 and ds.attrs["audit_memo_hits"] == 3
    memo = ds["audit_kind"].values == "memo"
    assert (ds["audit_simulated_bytes"].values[memo] > 0).all()
    assert ds.attrs["audit_memo_error"] < 0.02


def test_the_sample_follows_the_weights_and_keeps_k():
    """One heavy item among light ones: with k = 1 it is drawn about as often as its share of the weight."""
    heavy_drawn = 0
    for seed in range(200):
        sample = WeightedReservoir(1, np.random.default_rng(seed))
        for i, weight in enumerate([1.0] * 9 + [9.0]):
            key = sample.key(weight)
            if key is not None:
                sample.keep(key, i)
        assert len(sample.items()) == 1
        heavy_drawn += sample.items() == [9]
    assert 0.4 < heavy_drawn / 200 < 0.6  # its share of the weight: 9 / 18


@pytest.mark.parametrize("audit", [-1, 2.5, True])
def test_an_impossible_audit_is_refused(audit):
    with pytest.raises(InputError, match="audit"):
        WormholeConfig(audit=audit)


def test_the_audit_needs_wormhole_mode(lone_flows):
    with pytest.raises(InputError, match="Wormhole"):
        Simulation(lone_flows, mode="packet", audit=4)


def test_copies_over_the_memory_share_are_replayed_at_once_with_the_same_outcome(lone_flows, monkeypatch):
    """Under a cap so small that no copy may be kept until the end, every sampled skip is replayed as it is
    sampled; the replays start from the same states, so the audit is the same."""
    deferred = audited(lone_flows)
    replayed_at = []  # (simulated time when replayed, start of the skip)
    replay = Auditor._replay

    def spy(self, sampled):
        replayed_at.append((self.state.now_ps, sampled.args[2]))
        replay(self, sampled)

    monkeypatch.setattr(Auditor, "_replay", spy)
    cap = 3 * prepare(lone_flows).state.nbytes()  # a quarter of it holds no copy
    at_once = audited(replace(lone_flows, config=lone_flows.config.with_(memory_cap_bytes=cap)))
    assert replayed_at and all(now == start for now, start in replayed_at)
    for name in ("audit_start", "audit_end", "audit_simulated_bytes", "audit_error"):
        assert (deferred[name].values == at_once[name].values).all()


def test_audit_windows_sets_how_much_of_a_fast_forward_is_replayed(lone_flows):
    """Two steady-test windows by default; 0 replays each audited fast-forward to its end."""
    sim = Simulation(replace(lone_flows, wormhole=WormholeConfig(audit=8, audit_windows=0)), mode="wormhole")
    whole = sim.run()
    skips = {(s.start, s.end) for s in sim.controller.ff.log}
    assert {
        (int(a), int(b)) for a, b in zip(whole["audit_start"].values, whole["audit_end"].values, strict=True)
    } == skips
    short = audited(lone_flows)
    assert (short["audit_end"] - short["audit_start"]).max() < (whole["audit_end"] - whole["audit_start"]).min()
    assert whole.attrs["audit_fastforward_error"] < 0.005
