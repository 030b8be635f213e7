"""Small teaching scenarios: a few flows, a few hundred microseconds, ready for live plots.

Every builder takes the congestion control by preset name (``dcqcn``, ``hp``, ``timely``, ``dctcp``),
the link speed in Gb/s (one speed for every link, so every port has an ECN threshold) and optional
``EngineConfig`` overrides (``**changes``, e.g. ``kmin_bytes=...``). Bad values raise ``InputError``
before anything runs. Telemetry samples every microsecond in short chunks, so that a live view
(``wormhole_lab.viz.LiveRun``) gets a new chunk every ``chunk_samples`` microseconds of simulated time.
"""

import numpy as np

from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Scenario
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import DEFAULT_DELAY_PS, dumbbell, star
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.validate import check_topology
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.settings import WormholeConfig

__all__ = ["SCENARIOS", "incast", "parking_lot", "repeated_incast", "staggered", "teaching_scenario"]

#: telemetry for live views: 1 us samples, a chunk every 20 us of simulated time
LIVE_TELEMETRY = Telemetry(interval_ps=1_000_000, chunk_samples=20)


def _check_n(fn: str, n, lo: int = 1, hi: int = 64) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not lo <= n <= hi:
        raise InputError(f"{fn}(n={n!r})", f"n must be an integer from {lo} to {hi}", f"pick n between {lo} and {hi}")
    return int(n)


def _check_size(fn: str, size) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1000:
        raise InputError(
            f"{fn}(size={size!r})", "flow size must be an integer of at least 1000 bytes", "e.g. 1_000_000"
        )
    return int(size)


def _lesson(topo, flows, cca: str, link_gbps: int, changes: dict, name: str, kind: str, **fields) -> Scenario:
    """A teaching Scenario: the preset of ``cca`` at ``link_gbps`` with ``changes``, live telemetry, and in ``meta``
    what kind of lesson it is and the bottleneck's rate (every link runs at ``link_gbps``)."""
    cfg = preset(cca, host_bw_gbps=link_gbps)
    cfg = cfg.with_(**changes) if changes else cfg
    meta = {"teaching": kind, "bottleneck_bps": link_gbps * 10**9}
    return Scenario(topo, flows, cfg, name=f"{name}, {cca}", telemetry=LIVE_TELEMETRY, meta=meta, **fields)


def incast(n: int = 4, cca: str = "dctcp", link_gbps: int = 100, size: int = 1_000_000, **changes) -> Scenario:
    """N-to-1 incast: hosts 1..n each send ``size`` bytes to host 0 through one switch, all at t = 0."""
    n, size = _check_n("incast", n), _check_size("incast", size)
    topo = star(n + 1, host_rate_bps=link_gbps * 10**9)
    flows = make_flows(list(range(1, n + 1)), [0] * n, [size] * n, 0)
    return _lesson(topo, flows, cca, link_gbps, changes, f"{n}-to-1 incast", "incast")


def staggered(
    n: int = 4, cca: str = "dctcp", link_gbps: int = 100, size: int = 2_000_000, stagger_us: int = 50, **changes
) -> Scenario:
    """Staggered flows on a dumbbell: left host i sends to right host i, starting ``i * stagger_us`` apart, so the
    bottleneck share halves, thirds, ... as flows join and grows back as they leave."""
    n, size = _check_n("staggered", n), _check_size("staggered", size)
    if isinstance(stagger_us, bool) or not isinstance(stagger_us, (int, np.integer)) or stagger_us < 0:
        raise InputError(f"staggered(stagger_us={stagger_us!r})", "must be an integer >= 0", "e.g. 100")
    rate = link_gbps * 10**9
    topo = dumbbell(n, n, host_rate_bps=rate, bottleneck_rate_bps=rate)
    starts = np.arange(n, dtype=np.int64) * int(stagger_us) * 1_000_000
    flows = make_flows(list(range(n)), list(range(n, 2 * n)), [size] * n, starts)
    return _lesson(topo, flows, cca, link_gbps, changes, f"{n} staggered flows on a dumbbell", "staggered")


def parking_lot_topology(n: int, rate_bps: int, delay_ps: int = DEFAULT_DELAY_PS) -> Topology:
    """Three switches in a row, S0 - S1 - S2, joined by two bottleneck links.

    Hosts: ``0..n-1`` long-flow senders on S0; ``n..2n-1`` their receivers on S2; ``2n`` (on S0) sends to
    ``2n+1`` (on S1) across the first bottleneck; ``2n+2`` (on S1) sends to ``2n+3`` (on S2) across the second.
    Switches are nodes ``2n+4``, ``2n+5``, ``2n+6``; the two bottlenecks are the last two links."""
    n_hosts = 2 * n + 4
    s0, s1, s2 = n_hosts, n_hosts + 1, n_hosts + 2
    attach = [s0] * n + [s2] * n + [s0, s1, s1, s2]
    links = [(h, sw) for h, sw in enumerate(attach)] + [(s0, s1), (s1, s2)]
    arr = np.array(links, dtype=np.int64)
    is_switch = np.zeros(n_hosts + 3, dtype=bool)
    is_switch[n_hosts:] = True
    topo = Topology(
        is_switch=is_switch,
        link_a=arr[:, 0].copy(),
        link_b=arr[:, 1].copy(),
        link_rate_bps=np.full(len(links), rate_bps, dtype=np.int64),
        link_delay_ps=np.full(len(links), delay_ps, dtype=np.int64),
        link_error_rate=np.zeros(len(links)),
        name=f"parking_lot({n})",
        meta={"builder": "parking_lot", "n_long": n, "switch_ids": [s0, s1, s2]},
    )
    check_topology(topo, where="parking_lot_topology()")
    return topo


def parking_lot(n: int = 2, cca: str = "dctcp", link_gbps: int = 100, size: int = 1_000_000, **changes) -> Scenario:
    """Parking lot with two bottlenecks: ``n`` long flows cross both links S0-S1 and S1-S2; one short-path flow
    crosses each link alone. Max-min fairness gives every flow 1/(n+1) of a link; many CCAs give the long flows
    less (they see congestion twice)."""
    n, size = _check_n("parking_lot", n), _check_size("parking_lot", size)
    rate = link_gbps * 10**9
    topo = parking_lot_topology(n, rate)
    src = list(range(n)) + [2 * n, 2 * n + 2]
    dst = list(range(n, 2 * n)) + [2 * n + 1, 2 * n + 3]
    flows = make_flows(src, dst, [size] * (n + 2), 0, phase=["long"] * n + ["cross1", "cross2"])
    return _lesson(topo, flows, cca, link_gbps, changes, f"parking lot, {n} long flows", "parking_lot")


def repeated_incast(
    n: int = 3,
    rounds: int = 3,
    cca: str = "dctcp",
    link_gbps: int = 100,
    size: int = 1_500_000,
    gap_us: int = 10,
    memo: str | bool = True,
    **changes,
) -> Scenario:
    """``rounds`` N-to-1 incasts one after the other (round k+1 starts ``gap_us`` after round k finished): the same
    contention pattern repeats, so later rounds are memo hits (``memo``: True, the default, memoizes within the run;
    a SQLite path keeps the DB; False turns it off). DCTCP by
    default: its incast settles at equal shares. HPCC's shares keep converging for milliseconds, and Wormhole mode
    neither skips nor stores a partition whose shares still move (docs/wormhole-design.md), so under HPCC every
    round runs packet by packet."""
    n, size = _check_n("repeated_incast", n), _check_size("repeated_incast", size)
    rounds = _check_n("repeated_incast", rounds, 1, 20)
    src, dst, deps = [], [], []
    for r in range(rounds):
        for i in range(n):
            src.append(1 + i)
            dst.append(0)
            deps.append(tuple(range((r - 1) * n, r * n)) if r else ())
    flows = make_flows(src, dst, [size] * len(src), 0, deps=deps, gap_ps=int(gap_us) * 1_000_000)
    topo = star(n + 1, host_rate_bps=link_gbps * 10**9)
    return _lesson(
        topo,
        flows,
        cca,
        link_gbps,
        changes,
        f"{rounds} x {n}-to-1 incast",
        "repeated_incast",
        wormhole=WormholeConfig(memo=memo),
    )


SCENARIOS = {
    "N-to-1 incast": incast,
    "staggered flows (dumbbell)": staggered,
    "parking lot (two bottlenecks)": parking_lot,
}


def teaching_scenario(kind: str, **kwargs) -> Scenario:
    """Build one of ``SCENARIOS`` by its display name."""
    if kind not in SCENARIOS:
        raise InputError(
            "teaching_scenario(kind)", f"unknown scenario {kind!r}", f"choose one of {', '.join(SCENARIOS)}"
        )
    return SCENARIOS[kind](**kwargs)
