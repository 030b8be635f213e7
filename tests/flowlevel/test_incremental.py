"""Incremental max-min (``maxmin.refill``): the same rates as water-filling everything, on only the flows whose
rate can change."""

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.flowlevel.run import FlowLevel
from wormhole_lab.simulation import Scenario, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import fat_tree
from wormhole_lab.workload.flows import make_flows

G400 = 400 * 10**9


def full_waterfill(ft) -> dict[int, float]:
    """Max-min rates of every flow on a port now, by progressive filling over the whole graph, written here in
    Python with the kernel's arithmetic (``maxmin.waterfill``): per level the smallest share left, every port at
    exactly that share freezes its flows, each frozen flow subtracts the level from its ports."""
    on = {
        p: [int(f) for f in ft.port_flows[ft.port_off[p] : ft.port_off[p] + ft.port_cnt[p]]] for p in range(len(ft.cap))
    }
    ports_of = {
        f: [int(q) for q in ft.flow_ports[ft.flow_off[f] : ft.flow_off[f + 1]]] for fs in on.values() for f in fs
    }
    res = {p: float(ft.cap[p]) for p in on if on[p]}
    cnt = {p: len(on[p]) for p in res}
    rate: dict[int, float] = {}
    while len(rate) < len(ports_of):
        level = min(res[p] / cnt[p] for p in res if cnt[p] > 0)
        fresh = {f for p in res if cnt[p] > 0 and res[p] / cnt[p] == level for f in on[p] if f not in rate}
        for f in fresh:
            rate[f] = level
        for f in fresh:
            for q in ports_of[f]:
                res[q] = max(res[q] - level, 0.0)
                cnt[q] -= 1
    return rate


def random_case(seed: int, n: int = 120):
    """400G hosts on a k=4 fat tree of 100G links (bottlenecks on host and fabric links alike), flows of 1 kB to
    3 MB between random hosts, arriving over 40 us."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 16, n)
    dst = (src + rng.integers(1, 16, n)) % 16
    sizes = np.exp(rng.uniform(np.log(1_000), np.log(3_000_000), n)).astype(np.int64)
    flows = make_flows(src, dst, sizes, np.sort(rng.integers(0, 40_000, n)) * 1_000)
    return Scenario(fat_tree(4, host_rate_bps=G400), flows, preset("dcqcn"), telemetry=Telemetry.off())


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_rates_equal_a_full_waterfill_at_every_step(seed):
    """Stop after every instant (the next event's time) and compare each flow's rate with a from-scratch
    water-filling of the whole graph: bit for bit."""
    run = FlowLevel(prepare(random_case(seed)).state)
    ft, compared, t = run.tables, 0, 0
    while run.advance(t) == "time":  # t: the instant just done
        full = full_waterfill(ft)
        got = {f: float(ft.rate[f]) for f in full}
        assert got == full, f"at t={t} ps"
        compared += len(full)
        t = run.next_event_ps()
    assert compared > 1_000
    assert run.attrs()["fill_rounds"] > run.attrs()["rate_recomputations"]  # regions had to grow: that path ran


def test_one_flow_finishing_rerates_only_its_neighbours():
    """16 hosts each send 10 MB to the host 8 further on, one flow per host link, on a fabric with room for all
    (100G hosts, 400G fabric: every flow is held by its own host links, and they all share fabric links, one
    connected component). Host 0 also sends 10 kB to host 9: host 0's and host 9's links are shared, so flows
    0 (0 -> 8) and 1 (1 -> 9) run at half rate with it. When it drains, those two alone are recomputed; a whole
    recomputation takes all 16."""
    src, dst = list(range(16)) + [0], [(h + 8) % 16 for h in range(16)] + [9]
    flows = make_flows(src, dst, [10_000_000] * 16 + [10_000], 0)
    topo = fat_tree(4, fabric_rate_bps=G400)
    counts = {}
    for incremental in (True, False):
        run = FlowLevel(prepare(Scenario(topo, flows, preset("dcqcn"), telemetry=Telemetry.off())).state, incremental)
        assert run.advance(0) == "time"
        before = run.attrs()
        assert before["flows_rerated"] == 17
        rate = run.tables.rate.copy()
        assert rate[0] == rate[1] == rate[16] == rate[2] / 2
        assert run.advance(100_000_000) == "time"  # 100 us: the small flow drained (~2 us), the rest still send
        after = run.attrs()
        assert after["rate_recomputations"] == before["rate_recomputations"] + 1
        counts[incremental] = (
            after["flows_rerated"] - before["flows_rerated"],
            after["flows_visited"] - before["flows_visited"],
        )
        assert run.tables.rate[0] == run.tables.rate[1] == rate[2]
    # flows 0 and 1, and no other flow looked at; filled twice: at full rate they fill their receivers' links
    # too (loose until then), which join the region, and the region is filled again
    assert counts[True] == (2, 4)
    assert counts[False][0] == 16
