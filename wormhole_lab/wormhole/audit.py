"""Self-audit of Wormhole mode: a sample of its skips, re-simulated packet by packet, gives the run an error bar.

Every fast-forward and memo hit is offered as it is taken, weighted by the bytes it credits, to a weighted
reservoir of ``k`` per kind (Efraimidis-Spirakis keys drawn from the run's seed, so the same run audits the
same skips). A skip that enters the reservoir leaves a copy of the state at its start; when the run ends,
each sampled skip is replayed from its copy with its partition alone: the replay drops every other event,
since partitions share no port (only the shared buffer, which then stays as it was). The replay covers the
stretch the skip vouched for: a memo hit's whole stored transient, a fast-forward's first ``span_windows``
steady-test windows (at most its length; all of it with ``span_windows=0``). A fast-forward credits one
constant rate, so its first windows test that rate, but not a drift later in a long skip, which the skip
caps in ``fastforward`` bound instead. Each flow's credited bytes are compared with the bytes the packets
moved, counted the way the memo DB counts a transient (``unqueued_bytes``).

The run's FCT error estimate, per flow: (time fast-forwarded x the fast-forwards' error + time taken from the
memo DB x the memo hits' error) / FCT, where a kind's error is the mean of its audited windows' errors
(each the credited bytes' absolute deviation over the bytes simulated). The sample is drawn in proportion
to bytes, so that plain mean estimates the byte-weighted error of all skips of the kind. Absolute errors
are added: the estimate assumes no cancellation, and is an upper-side figure.
"""

import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.offset import isolate_partition
from wormhole_lab.engine.runner import advance
from wormhole_lab.engine.state import ResourceLimitError
from wormhole_lab.wormhole.queued import unqueued_bytes

AUDIT_MEMORY_SHARE = 0.25  # of EngineConfig.memory_cap_bytes, for the copies of the state kept until the end
KINDS = ("fastforward", "memo")
METHOD = (
    "per flow: (fast-forwarded time x mean audited fast-forward error + memo time x mean audited memo-hit error) "
    "/ FCT; an audited window's error = sum |credited - simulated bytes| / sum simulated bytes, its partition "
    "replayed alone packet by packet from the state at the skip's start; windows sampled in proportion to "
    "the bytes they credited"
)


@dataclass(frozen=True)
class AuditedWindow:
    """One replayed skip: what it credited and what the packets did over [start_ps, end_ps]."""

    kind: str
    part: int
    start_ps: int
    end_ps: int
    credited_bytes: float
    simulated_bytes: int
    error: float  # sum over flows of |credited - simulated| / sum of simulated
    signed_error: float  # (credited - simulated) / simulated, summed over the flows
    max_flow_error: float


class WeightedReservoir:
    """A sample of ``k`` items drawn with probability in proportion to weight, without replacement
    (Efraimidis-Spirakis: each offer draws u; the k largest log(u) / weight are kept)."""

    def __init__(self, k: int, rng: np.random.Generator):
        self.k = k
        self.rng = rng
        self.entries: list = []  # min-heap of (key, order, item)
        self.offers = 0

    def key(self, weight: float) -> float | None:
        """The key of an offer of ``weight`` if it enters the sample, else None (one draw per offer)."""
        u = self.rng.random()
        self.offers += 1
        if weight <= 0:
            return None
        key = math.log(u or np.finfo(float).tiny) / weight
        return key if len(self.entries) < self.k or key > self.entries[0][0] else None

    def keep(self, key: float, item) -> None:
        entry = (key, self.offers, item)
        if len(self.entries) < self.k:
            heapq.heappush(self.entries, entry)
        else:
            heapq.heapreplace(self.entries, entry)

    def items(self) -> list:
        return [item for _, _, item in self.entries]


class _Sampled:
    """A skip in the sample: the copy of the state at its start until it is replayed, then its AuditedWindow."""

    def __init__(self, kind: str, part: int, start: int, end: int, credited: dict, copy):
        self.args = (kind, part, start, end, credited)
        self.copy = copy
        self.window: AuditedWindow | None = None


class Auditor:
    """Samples skips as Wormhole mode takes them, keeps a copy of the state at the start of each sampled one,
    and replays them at the end (``replay_all``): a skip that leaves the sample costs a copy, not a replay.
    The copies kept may take ``AUDIT_MEMORY_SHARE`` of the memory cap; past that a sampled skip is replayed
    at once and its copy dropped."""

    def __init__(self, state, k: int, seed: int, window_ps: int, span_windows: int):
        self.state = state
        self.k = k
        self.span_ps = span_windows * window_ps  # 0: a fast-forward is replayed to its end
        rng = np.random.default_rng([int(seed), 0x417D17])
        self.samples = {kind: WeightedReservoir(k, rng) for kind in KINDS}
        self.replays = 0
        self.seconds = 0.0

    def offer_fastforward(self, part: int, now: int, dt: int, goodput: dict) -> None:
        """A fast-forward of ``dt`` at ``goodput`` (bytes/ps per flow) is about to be taken."""
        span = min(dt, self.span_ps) if self.span_ps else dt
        self._offer("fastforward", part, now, now + span, {f: rate * span for f, rate in goodput.items()})

    def offer_memo(self, part: int, now: int, t_conv: int, nbytes: dict) -> None:
        """A memoized transient of ``t_conv`` crediting ``nbytes`` per flow is about to be applied."""
        self._offer("memo", part, now, now + t_conv, nbytes)

    def _offer(self, kind: str, part: int, start: int, end: int, credited: dict) -> None:
        sample = self.samples[kind]
        key = sample.key(float(sum(credited.values())) if end > start else 0.0)
        if key is None:
            return
        t0 = time.perf_counter()
        sampled = _Sampled(kind, part, start, end, credited, self._copy())
        sample.keep(key, sampled)
        held = sum(x.copy.nbytes() for x in self._sampled() if x.copy is not None)
        if held > AUDIT_MEMORY_SHARE * int(self.state.ci[L.CI_MEMORY_CAP]):
            self._replay(sampled)
        self.seconds += time.perf_counter() - t0

    def _sampled(self) -> list[_Sampled]:
        return [x for sample in self.samples.values() for x in sample.items()]

    def replay_all(self) -> None:
        """Replay every sampled skip not replayed yet (the run has ended)."""
        t0 = time.perf_counter()
        for sampled in self._sampled():
            if sampled.window is None:
                self._replay(sampled)
        self.seconds += time.perf_counter() - t0

    def _replay(self, sampled: _Sampled) -> None:
        kind, part, start, end, credited = sampled.args
        copy, sampled.copy = sampled.copy, None
        isolate_partition(copy.g, copy.events, copy.pk, copy.pt, copy.fl, part)
        ports = np.flatnonzero(copy.pt[:, L.PT_PART] == part).tolist()
        flows = np.array(sorted(credited), dtype=np.int64)
        before = unqueued_bytes(copy, flows, ports)
        while (stop := advance(copy, end)) not in ("time", "idle", "all_done"):
            if stop == "invariant":
                raise RuntimeError(f"the audit's replay of partition {part} from t={start} ps broke an invariant")
            copy.g[L.G_FLOW_LOG_N] = 0  # nobody places flows in the replay
            copy.g[L.G_LOG_STARTS] = 0
            copy.g[L.G_TEL_ROW] = 0  # nor keeps its samples
        after = unqueued_bytes(copy, flows, ports)
        simulated = dict(zip(flows.tolist(), (after - before).tolist(), strict=True))
        self.replays += 1
        total_sim, total_credit = sum(simulated.values()), float(sum(credited.values()))
        deviation = sum(abs(credited[f] - simulated[f]) for f in credited)
        sampled.window = AuditedWindow(
            kind,
            part,
            start,
            end,
            total_credit,
            int(total_sim),
            deviation / total_sim if total_sim else math.inf,
            (total_credit - total_sim) / total_sim if total_sim else math.inf,
            max(abs(credited[f] - simulated[f]) / simulated[f] if simulated[f] else math.inf for f in credited),
        )

    def _copy(self):
        s = self.state
        need = 2 * s.nbytes() + s.outside_bytes
        cap = int(s.ci[L.CI_MEMORY_CAP])
        if cap and need > cap:
            raise ResourceLimitError(
                f"the audit's copy of the engine state ({s.nbytes() / 2**30:.2f} GiB) at t={s.now_ps} ps would take "
                f"the run to {need / 2**30:.2f} GiB, over the {cap / 2**30:.2f} GiB cap "
                "(EngineConfig.memory_cap_bytes). Fix: run without the audit (audit=0, no --audit), or raise the cap"
            )
        return s.copy()

    def windows(self) -> list[AuditedWindow]:
        """The audited windows, in order of start."""
        self.replay_all()
        return sorted((x.window for x in self._sampled()), key=lambda w: (w.start_ps, w.kind, w.part))

    def kind_error(self, kind: str) -> float:
        """Mean error of the audited windows of ``kind`` (0 when none was audited)."""
        self.replay_all()
        errors = [x.window.error for x in self.samples[kind].items()]
        return float(np.mean(errors)) if errors else 0.0

    def fct_error_estimate(self, ff_time: np.ndarray, memo_time: np.ndarray, fct_ps: np.ndarray) -> np.ndarray:
        """Per flow, the estimated relative FCT error (0 for flows that did not complete)."""
        skipped = ff_time * self.kind_error("fastforward") + memo_time * self.kind_error("memo")
        return np.where(fct_ps > 0, skipped / np.where(fct_ps > 0, fct_ps, 1), 0.0)
