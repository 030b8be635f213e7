"""The Wormhole kernel's Python side: what happens at the engine's stops in ``mode="wormhole"``.

The engine logs flow starts and completions and returns when they must be placed in partitions (a new
flow touches a fast-forwarded partition, which skips back; with a memo DB, after every instant with a
flow event, so that each new partition is looked up) and when a partition turned steady (place the
logged flows, then fast-forward it). Everything else runs in the compiled kernel.
"""

import hashlib
import json
from functools import cached_property
from typing import NamedTuple

import numpy as np

import wormhole_lab
from wormhole_lab.engine import layout as L
from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.rate_window import mark_candidates
from wormhole_lab.engine.state import slots_of
from wormhole_lab.wormhole import partition as P
from wormhole_lab.wormhole.audit import METHOD, Auditor
from wormhole_lab.wormhole.fastforward import STATE_SHAPE, FastForward, cca_state
from wormhole_lab.wormhole.memo import MemoDB
from wormhole_lab.wormhole.partition import Partitions
from wormhole_lab.wormhole.pattern_lookup import PatternLookup
from wormhole_lab.wormhole.segments import select_segments, sort_segments
from wormhole_lab.wormhole.settings import WormholeConfig

# a watched partition's outcome is stored when a member has this many times the tail left to send: a hit leaves
# the tail to the packet level, with room to spare for a partition whose flows started a packet apart
MARK_TAILS = 2


class Watch(NamedTuple):
    """A transient watched for the memo DB: since ``t0`` (its partition's formation), of flows ``ids`` (ascending)
    at ``rates``."""

    t0: int
    ids: np.ndarray
    rates: np.ndarray
    start: np.ndarray  # per flow, bytes sent and out of the queues at t0 (FastForward.unqueued)
    marked: bool  # its flows carry marks (FW_MARK): it may be stored before it settles


@kernel
def _mark_if_fresh(fw, slots, sizes, left):
    """Give each flow (in ``slots``, of ``sizes`` bytes) a mark ``left`` bytes before its end (``FW_MARK``) if all of
    them have more than that to send and none has had anything acknowledged; True when it did.

    An outcome that has not settled depends on the state the partition formed in, which its FCG holds only for
    flows that start afresh (nothing acknowledged yet, as in a collective). Formed at a completion mid-flight, it
    does not: an HPCC incast's last three flows, taken from the memo DB then, came out of it on other shares than
    packet mode's (each later flow of the incast up to 8.8 % off)."""
    for i in range(len(slots)):
        if sizes[i] - left <= fw[slots[i], L.FW_SND_NXT] or fw[slots[i], L.FW_SND_UNA] != 0:
            return False
    for i in range(len(slots)):
        fw[slots[i], L.FW_MARK] = sizes[i] - left
    return True


class Looks(NamedTuple):
    """The partitions formed at one look (``WormholeController._looks``): the i-th one's flows are
    ``flows[offsets[i] : offsets[i + 1]]``, ascending; per flow, its rate (bit/s); per partition, whether a member
    is down to its tail (``spent``: it is not looked up) and the memo DB's entry it finds (-1: none), with its
    flows in the order the entry's positions index (``ordered``, cut as ``flows``: ``PatternLookup.find_all``)."""

    flows: np.ndarray
    offsets: np.ndarray
    rates: np.ndarray
    spent: np.ndarray
    entries: np.ndarray
    ordered: np.ndarray


def config_fingerprint(engine_config) -> str:
    """Everything in the engine configuration that shapes a transient (not the seed, the generator or the stop time)."""
    manifest = json.loads(engine_config.manifest_json())
    for key in ("seed", "rng", "stop_time_ps", "memory_cap_bytes"):
        manifest.pop(key)
    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()[:32]


class WormholeController:
    def __init__(self, state, flows, config: WormholeConfig, engine_config):
        self.state = state
        steady = config.steady.for_cca(engine_config)
        line_bps = state.pt[state.fl[:, L.FL_NIC_PORT], L.PT_RATE]
        # memo lookups need a partition as it forms, and a return to Python each: they follow the flows that last
        # at least a skip worth taking at line rate (short flows, as in random traffic, would cost a return each)
        eager = state.fl[:, L.FL_SIZE] * 8e12 / line_bps >= steady.min_skip_ps
        eager &= config.memo_kind != "off"
        state.attach_partitions(steady.interval_ps, steady.window, steady.theta, eager)
        state.ci[L.CI_STEADY_LINE] = steady.line_window
        state.ci[L.CI_STEADY_CYCLES] = steady.cycles
        window_ps = steady.window * steady.interval_ps
        self.ff = FastForward(state, flows, steady.min_skip_ps, window_ps, steady.theta, config.tail_packets)
        self.paths = self.ff.paths
        self.partitions = Partitions(state)
        # a flow down to its tail is not looked up (_look_up), and a completion that leaves only such flows needs
        # no return (engine/flow_log.py)
        state.ci[L.CI_QUIET_TAIL] = self.ff.tail_bytes
        self.retry_ps = window_ps
        self._partition_log: list[tuple[np.ndarray, np.ndarray]] = []  # times of changes, partitions after each
        self.steady_entries = 0
        self.memo = None
        if config.memo_kind != "off":
            self.memo = MemoDB(None if config.memo_kind == "run" else config.memo, wormhole_lab.__version__)
        self._engine_config, self._line_bps = engine_config, line_bps
        self.pending: dict[int, Watch] = {}  # partition -> the transient being watched for the memo DB
        self.auditor = None
        if config.audit:
            self.auditor = Auditor(state, config.audit, engine_config.seed, window_ps, config.audit_windows)
            self.ff.auditor = self.auditor

    @cached_property
    def lookup(self) -> PatternLookup:
        """The memo DB's lookups, built at the first one: a run in which no partition forms (random short
        traffic) does not pay for the fingerprint and the path shapes (about 1 ms of a 0.1 s run)."""
        return PatternLookup(
            self.memo,
            config_fingerprint(self._engine_config),
            self.paths,
            self.paths.shape_codes(self.state.pt[:, L.PT_DELAY]),
            self._line_bps,
            STATE_SHAPE,
        )

    def on_stop(self, steady: bool, horizon: int) -> None:
        """The kernel returned: place the flows it logged, then fast-forward the partitions that turned steady."""
        g = self.state.g
        n, now = int(g[L.G_FLOW_LOG_N]), int(g[L.G_NOW])
        g[L.G_FLOW_LOG_N] = 0
        g[L.G_LOG_STARTS] = 0
        g[L.G_LOG_DUE] = 0
        if n:
            self._place(n, now, horizon)
        if g[L.G_MARKED]:
            g[L.G_MARKED] = 0
            self._on_marks(now)
        if steady:
            if n:  # the candidates were marked before the logged flows had their partitions
                s = self.state
                mark_candidates(s.g, s.fl, s.fw, s.ci, s.parts, s.active, now)
            self._fast_forward(horizon)

    def _place(self, n: int, now: int, horizon: int) -> None:
        """Place the ``n`` logged flows in partitions, then look up or watch each partition that changed now."""
        flows, times, started = self.state.flow_log[:n].T.copy()
        # a flow that started and completed since the last look never needs a partition of its own; the
        # partitions it touched restart their steady test at its completion, as if it had been placed
        kinds = self.partitions.kinds(flows, started)
        self._skip_back_touched(flows[kinds == P.START], now)
        touched, counts = self.partitions.place(np.column_stack([flows, times, kinds]))
        self.ff.fit()  # placing may have taken new partition ids
        self.ff.finish(touched, now)
        placing = kinds <= P.COMPLETION
        self._partition_log.append((times[placing], counts[placing]))
        self.paths.forget(flows[started == 0])
        # each changed partition is looked at once, as it stands now (a collective's flows start together), and
        # its steady test restarts at its last change, as if it had been written at each one
        alive = self.partitions.alive_among(touched)
        formed = self.partitions.changed_at(alive) == now
        self.ff.forget(alive)
        usable = formed.any() and self.memo is not None and self.memo.usable
        looks = self._looks(alive[formed]) if usable else None
        with self.ff.batched():
            tried = self._look_up(alive, formed, looks, now)
            if len(tried):
                self._take(alive[formed][tried], tried, looks, now, horizon)

    def _looks(self, parts: np.ndarray) -> Looks:
        """What the lookups and watches of ``parts`` read, and what they find, for all of them at once. Nothing the
        loop over them does (memo jumps, marks) changes it: partitions share no flow and no port, and the loop
        stores nothing in the memo DB."""
        flows, offsets = self.partitions.members_of(parts)
        slots = slots_of(self.state.fl, flows)
        rates = self.state.fw[slots, L.FW_RATE]
        labels = self.lookup.labels_of(flows, rates)
        left = np.minimum.reduceat(self.state.fl[flows, L.FL_SIZE] - self.state.fw[slots, L.FW_SND_NXT], offsets[:-1])
        spent = left < self.state.ci[L.CI_QUIET_TAIL]
        sorted_labels = labels.copy()
        sort_segments(sorted_labels, offsets)
        entries, ordered = self.lookup.find_all(flows, offsets, rates, labels, sorted_labels, np.flatnonzero(~spent))
        return Looks(flows, offsets, rates, spent, entries, ordered)

    def _skip_back_touched(self, starts: np.ndarray, now: int) -> None:
        """Flows that start now on the ports of a partition being fast-forwarded skip it back to now (the kernel
        returns at such a start at once, so the partition is as it was at the last look)."""
        if not self.ff.skips.n_active or not len(starts):
            return
        for part in self.partitions.skipping_at_ports_of(starts, now).tolist():
            self.ff.skip_back(part, now)

    def _look_up(self, alive: np.ndarray, formed: np.ndarray, looks: Looks | None, now: int) -> np.ndarray:
        """The partitions ``alive`` changed, those ``formed`` now (``looks``: what they read, or None): count their
        lookups, watch for a transient to store those that find nothing stored, and drop the watches of the rest.
        Returns which of the formed ones (as ``looks`` numbers them) find a transient, to be taken if it fits
        (``_take``). Taking one changes nothing this reads or writes of another partition: they share no flow and
        no port."""
        looked = np.zeros(int(formed.sum()), dtype=np.bool_)
        if looks is not None and self.memo.usable:
            # a partition with a member down to its tail (all sent, as when the rest of a collective completed)
            # takes no stored transient, and what it does next, a member's end, is not one its FCG tells: it is
            # neither looked up nor watched (on MoE-8x7B, 2,048 of 6,368 lookups were such)
            looked = ~looks.spent
        found = looked & (looks.entries >= 0) if looks is not None else looked
        missed = looked & ~found  # a pattern already stored (but of no use now) is not watched and stored again
        if self.memo is not None:
            self.memo.lookups += int(looked.sum())
            self.memo.misses += int(missed.sum())
        if self.pending or missed.any():  # in order: a partition's watch clears the marks of the flows it had
            # what a watch starts from, read only when one starts (a warm MoE-8x7B run misses at few of its stops)
            start = self._unqueued(looks.flows) if missed.any() else None
            i = 0
            for part, now_formed in zip(alive.tolist(), formed.tolist(), strict=True):
                # its watch ended with the change; one that formed while nobody looked is not watched anew (too
                # late to skip its transient or to watch all of it)
                self._unwatch(part)
                if now_formed:
                    if missed[i]:
                        a, b = looks.offsets[i], looks.offsets[i + 1]
                        self._watch(part, now, looks.flows[a:b], looks.rates[a:b], start[a:b])
                    i += 1
        return np.flatnonzero(found)

    def _unqueued(self, flows: np.ndarray) -> np.ndarray:
        """``FastForward.unqueued`` of ``flows`` in any order (a flow's count reads only its own path's queues)."""
        ascending = np.sort(flows)
        return self.ff.unqueued(ascending)[np.searchsorted(ascending, flows)]

    def _watch(self, part: int, now: int, ids: np.ndarray, rates: np.ndarray, start: np.ndarray) -> None:
        """Watch the partition's transient for the memo DB: up to a steady verdict, or, if a member nears its
        end first, up to there (the kernel returns when a flow passes its ``FW_MARK``). ``start``: its flows'
        ``FastForward.unqueued`` now."""
        fl = self.state.fl
        marked = _mark_if_fresh(self.state.fw, slots_of(fl, ids), fl[ids, L.FL_SIZE], MARK_TAILS * self.ff.tail_bytes)
        self.pending[part] = Watch(now, ids, rates, start, marked)

    def _unwatch(self, part: int) -> Watch | None:
        watch = self.pending.pop(part, None)
        if watch is not None:
            slots = self.state.fl[watch.ids, L.FL_SLOT]
            self.state.fw[slots[slots >= 0], L.FW_MARK] = 0  # a flow that gave its slot back took its mark along
        return watch

    def _unchanged(self, part: int, watch: Watch) -> bool:
        """The watched partition lives on with the flows it was watched with."""
        return self.partitions.alive(part) and np.array_equal(watch.ids, self.partitions.member_ids(part))

    def _on_marks(self, now: int) -> None:
        """A watched partition's member passed its mark: store the outcome up to here, as one that has not
        settled. Watches whose partition changed meanwhile are dropped."""
        for part, watch in list(self.pending.items()):
            if not self._unchanged(part, watch):
                self._unwatch(part)
            elif watch.marked and (self.state.fw[slots_of(self.state.fl, watch.ids), L.FW_MARK] == 0).any():
                self._record(part, now, settled=False)

    def _take(self, parts: np.ndarray, which: np.ndarray, looks: Looks, now: int, horizon: int) -> None:
        """Take the stored transients of partitions ``parts``, just formed (the ``which``-th of ``looks``), where every
        flow has room for it and no known start comes before the partition's first completion
        (``fastforward._memo_fits``): after a settled transient, when the first flow would finish at the stored
        goodput; after one stored at a member's mark, at its end."""
        ports, port_offsets = self.partitions.ports_of(parts)
        tried = np.zeros(len(looks.offsets) - 1, dtype=np.bool_)
        tried[which] = True
        (members,), member_offsets = select_segments((looks.ordered,), looks.offsets, tried)
        taken = self.ff.take_memo(parts, looks.entries[which], members, member_offsets, self.lookup.stored, ports,
                                  port_offsets, now, horizon)  # fmt: skip
        self.memo.hits += taken
        self.memo.misses += len(parts) - taken

    def _record(self, part: int, now: int, settled: bool) -> None:
        """The watched transient of ``part`` converged (``settled``) or reached a member's mark: store what it
        produced. An outcome that has not settled holds what decides the next stretch: the members' sizes do
        not matter before their last packets, so a hit needs only room for the stored bytes (``_take``)."""
        watch = self._unwatch(part)
        if not self._unchanged(part, watch) or now <= watch.t0:
            return
        ids = watch.ids
        moved = self.ff.unqueued(ids) - watch.start
        if not settled and self.ff.split_unevenly(dict(zip(ids.tolist(), moved.tolist(), strict=True))):
            # flows that split a port unevenly before they settle do so by details the FCG does not hold: the same
            # incast elsewhere splits it otherwise (in packet mode each flow of the 6-to-1 incasts of
            # data/wormhole_shapes/waves ends up to 12 % apart from one wave to the next; of a DCQCN 2-to-1 incast
            # of 1 MB flows, 141 / 463 us in one round, 383 / 411 us in the next), so no stored split is right
            return
        ints, floats = cca_state(self.state, ids)
        value = {
            "t_conv": now - watch.t0,
            "settled": settled,
            "flows": [
                {"bytes": int(b), "int": i, "float": x}
                for b, i, x in zip(moved.tolist(), ints.tolist(), floats.tolist(), strict=True)
            ],
        }
        self.lookup.store(ids, watch.rates, value)

    def _fast_forward(self, horizon: int) -> None:
        parts, now = self.state.parts, int(self.state.g[L.G_NOW])
        with self.ff.batched():
            for part in np.flatnonzero(parts[:, L.PA_CANDIDATE]).tolist():
                parts[part, L.PA_CANDIDATE] = 0
                if not self.partitions.alive(part):
                    continue
                self.ff.finish(np.array([part]), now)
                members, ports = self.partitions.members(part), self.partitions.ports(part)
                settled = not self.ff.shares_disagree(np.array(members, dtype=np.int64))
                if part in self.pending and settled:  # a transient whose shares still move has not ended
                    self._record(part, now, settled=True)
                if settled and self.ff.try_skip(part, members, ports, now, horizon):
                    self.steady_entries += 1
                else:
                    parts[part, L.PA_RETRY_AT] = now + self.retry_ps

    def finish(self) -> None:
        """The run ended: book the skips still in progress, close the memo DB, replay the audit's sample."""
        self.ff.finish_all()
        if self.memo is not None:
            self.memo.close()
        if self.auditor is not None:
            self.auditor.replay_all()

    def attrs(self) -> dict:
        counts = self.series()["counts"]
        if not len(counts):
            counts = np.zeros(1, dtype=np.int64)
        return {
            "events_skipped_estimate": int(self.ff.events_skipped),
            "skips": self.ff.skips_taken,
            "skip_backs": self.ff.skip_backs,
            "steady_entries": self.steady_entries,
            "partitions_max": int(counts.max()),
            "partitions_mean": float(np.mean(counts)),
            **self._memo_attrs(),
        }

    def audit(self, fct_ps: np.ndarray) -> tuple[dict, np.ndarray, list] | None:
        """The self-audit's results (None when it was off): attributes, the per-flow FCT error estimate, and
        the audited windows."""
        auditor = self.auditor
        if auditor is None:
            return None
        estimate = auditor.fct_error_estimate(self.ff.ff_time, self.ff.memo_time, fct_ps)
        done = fct_ps > 0
        windows = auditor.windows()
        attrs = {
            "audit_k": auditor.k,
            "audit_fastforwards": sum(w.kind == "fastforward" for w in windows),
            "audit_memo_hits": sum(w.kind == "memo" for w in windows),
            "audit_replays": auditor.replays,
            "audit_seconds": auditor.seconds,
            "audit_fastforward_error": auditor.kind_error("fastforward"),
            "audit_memo_error": auditor.kind_error("memo"),
            "audit_fct_error_estimate": float(estimate[done].mean()) if done.any() else 0.0,
            "audit_fct_error_estimate_max": float(estimate[done].max()) if done.any() else 0.0,
            "audit_method": METHOD,
        }
        return attrs, estimate, windows

    def _memo_attrs(self) -> dict:
        memo = self.memo
        if memo is None:
            return {"memo": "off"}
        hit_rate = memo.hits / memo.lookups if memo.lookups else 0.0
        return {
            "memo": "run" if memo.temporary else str(memo.path),
            "memo_usable": int(memo.usable),
            "memo_lookups": memo.lookups,
            "memo_hits": memo.hits,
            "memo_misses": memo.misses,
            "memo_inserts": memo.inserts,
            "memo_hit_rate": hit_rate,
            "memo_bad_entries": memo.bad_entries,
            "memo_db_bytes": memo.size_bytes(),
        }

    def flow_variables(self, fct_ps: np.ndarray) -> dict:
        """Per flow, the share of its lifetime run packet by packet, fast-forwarded, or taken from the memo DB."""
        lifetime = np.where(fct_ps > 0, fct_ps, 1)
        ff_fraction = np.where(fct_ps > 0, self.ff.ff_time / lifetime, 0.0)
        memo_fraction = np.where(fct_ps > 0, self.ff.memo_time / lifetime, 0.0)
        return {
            "time_fastforward_fraction": (ff_fraction, "fraction of the flow's lifetime that was fast-forwarded"),
            "time_memo_fraction": (memo_fraction, "fraction of the flow's lifetime taken from the memo DB"),
            "time_packet_fraction": (
                np.where(fct_ps > 0, 1 - ff_fraction - memo_fraction, 0.0),
                "fraction of the flow's lifetime simulated packet by packet",
            ),
            "skipped_bytes": (
                self.state.fl[:, L.FL_SKIPPED_BYTES].copy(),
                "bytes credited by fast-forwarding or the memo DB rather than simulated packet by packet",
            ),
        }

    def series(self) -> dict:
        """The number of partitions after each flow event that changed them, and when."""
        times = np.concatenate([t for t, _ in self._partition_log] or [np.zeros(0, dtype=np.int64)])
        counts = np.concatenate([n for _, n in self._partition_log] or [np.zeros(0, dtype=np.int64)])
        return {"times": times, "counts": counts}
