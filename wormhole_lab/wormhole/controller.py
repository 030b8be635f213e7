"""The Wormhole kernel's Python side: what happens at the engine's stops in ``mode="wormhole"``.

The engine returns after each flow start or completion (re-partition; skip a fast-forwarded
partition back if a new flow touches it) and when a partition turned steady (fast-forward it).
Everything else runs in the compiled kernel.
"""

from dataclasses import dataclass, field

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.wormhole.fastforward import FastForward
from wormhole_lab.wormhole.partition import Partitions
from wormhole_lab.wormhole.steady import SteadyConfig


@dataclass(frozen=True)
class WormholeConfig:
    """Knobs of the accelerated mode."""

    steady: SteadyConfig = field(default_factory=SteadyConfig)


class WormholeController:
    def __init__(self, state, flows, config: WormholeConfig, engine_config, data_header: int, ack_wire: int):
        self.state = state
        steady = config.steady.for_cca(engine_config)
        payload = engine_config.payload_bytes
        state.attach_partitions(steady.interval_ps, steady.window, steady.theta)
        self.ff = FastForward(state, flows, payload, data_header, ack_wire, steady.min_skip_ps,
                              steady.window * steady.interval_ps, steady.theta)
        ports = [np.unique(np.concatenate([d, a])) for d, a in zip(self.ff.data_ports, self.ff.ack_ports, strict=True)]
        self.partitions = Partitions(ports)
        self.retry_ps = steady.window * steady.interval_ps
        self.partition_log: list[tuple[int, int]] = []  # (time, number of partitions) after each change
        self.steady_entries = 0

    def on_flow_event(self) -> None:
        g, fl = self.state.g, self.state.fl
        f, now = int(g[L.G_FLOW_EVENT]), int(g[L.G_NOW])
        g[L.G_FLOW_EVENT] = -1
        if fl[f, L.FL_STATE] == L.FS_ACTIVE:
            for part in self.partitions.touched_by(f):
                skip = self.ff.active.get(part)
                if skip is not None and skip.end > now:
                    self.ff.skip_back(part, now)
                self.ff.finish(part, now)
            part, _ = self.partitions.add(f)
            self._assign(part)
        else:
            self.ff.finish(self.partitions.of_flow[f], now)
            part, split_off = self.partitions.remove(f)
            fl[f, L.FL_PART] = -1
            released = [
                int(p)
                for p in self.ff.data_ports[f].tolist() + self.ff.ack_ports[f].tolist()
                if int(p) not in self.partitions._port_flows
            ]
            self.state.pt[released, L.PT_PART] = -1
            for q in [part, *split_off]:
                if q in self.partitions.flows:
                    self._assign(q)
        self.partition_log.append((now, len(self.partitions.flows)))

    def _assign(self, part: int) -> None:
        """Write the partition's id into its flows and ports and restart its steady test."""
        self.ff.forget(part)
        members = np.fromiter(self.partitions.flows[part], dtype=np.int64)
        ports = np.fromiter(self.partitions.ports(part), dtype=np.int64)
        fl = self.state.fl
        fl[members, L.FL_PART] = part
        fl[members, L.FL_RING_N] = 0
        fl[members, L.FL_RING_POS] = 0
        fl[members, L.FL_STEADY] = 0
        self.state.pt[ports, L.PT_PART] = part
        self.state.parts[part, :] = 0

    def on_steady(self, horizon: int) -> None:
        parts, now = self.state.parts, int(self.state.g[L.G_NOW])
        for part in np.flatnonzero(parts[:, L.PA_CANDIDATE]).tolist():
            parts[part, L.PA_CANDIDATE] = 0
            if part not in self.partitions.flows:
                continue
            self.ff.finish(part, now)
            members, ports = self.partitions.flows[part], self.partitions.ports(part)
            if self.ff.try_skip(part, members, ports, now, horizon):
                self.steady_entries += 1
            else:
                parts[part, L.PA_RETRY_AT] = now + self.retry_ps

    def finish(self, now: int) -> None:
        for part in list(self.ff.active):
            self.ff.finish(part, max(now, self.ff.active[part].end))

    def attrs(self) -> dict:
        counts = [n for _, n in self.partition_log] or [0]
        return {
            "events_skipped_estimate": int(self.ff.events_skipped),
            "skips": self.ff.skips_taken,
            "skip_backs": self.ff.skip_backs,
            "steady_entries": self.steady_entries,
            "partitions_max": int(max(counts)),
            "partitions_mean": float(np.mean(counts)),
        }

    def flow_variables(self, fct_ps: np.ndarray) -> dict:
        """Per flow, the fraction of its lifetime fast-forwarded (memoization adds its own share later)."""
        lifetime = np.where(fct_ps > 0, fct_ps, 1)
        ff_fraction = np.where(fct_ps > 0, self.ff.ff_time / lifetime, 0.0)
        return {
            "time_fastforward_fraction": (ff_fraction, "fraction of the flow's lifetime that was fast-forwarded"),
            "time_packet_fraction": (
                np.where(fct_ps > 0, 1 - ff_fraction, 0.0),
                "fraction of the flow's lifetime simulated packet by packet",
            ),
            "skipped_bytes": (
                self.state.fl[:, L.FL_SKIPPED_BYTES].copy(),
                "bytes credited by fast-forwarding rather than simulated packet by packet",
            ),
        }

    def series(self) -> dict:
        times = np.array([t for t, _ in self.partition_log], dtype=np.int64)
        counts = np.array([n for _, n in self.partition_log], dtype=np.int64)
        return {"times": times, "counts": counts}
