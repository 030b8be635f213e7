"""Building the engine's arrays from a topology, a flow table and a configuration, and growing them.

Everything here runs in Python before a kernel is called: it is where inputs are checked and
where the only allocations happen. Kernels never allocate; they stop and ask for room.
"""

from collections import namedtuple
from dataclasses import dataclass, fields

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine import qp, wheel
from wormhole_lab.engine.config import INT_LINE_RATES, EngineConfig
from wormhole_lab.engine.rng import new_state
from wormhole_lab.engine.rng_ns3 import ns3_state, setup_streams
from wormhole_lab.errors import InputError

DATA_HEADER_BYTES = 48  # SeqTs 6 + UDP 8 + IPv4 20 + PPP 14 (the reference's PppHeader is 14 B): 1048 B for 1000 B
ACK_WIRE_BYTES = 60  # rdma-hw.cc pads the ACK/NACK to 60 B counting PPP 14 + IPv4 20 (qbb header 12 B + 14 B pad)
INT_HEADER_BYTES = {"hpcc": 42, "timely": 8}  # int-header.cc GetStaticSize: 5 hops x 8 B + 2 B; a 64-bit timestamp
HPCC_ACK_WIRE_BYTES = 88  # PPP 14 + IPv4 20 + qbb 12 + the 42 B INT copy: above the 60 B minimum, so no pad
PFC_WIRE_BYTES = 43  # pause-header.cc: 9 B (time, qlen, class) + IPv4 20 + PPP 14
MMU_RESERVE_BYTES = 4 * 1024  # switch-mmu.cc: reserve per ingress port and class
MMU_RESUME_OFFSET_BYTES = 3 * 1024  # switch-mmu.cc: resume when 3 KiB below the threshold
PFC_SHIFT_AT_NIC_RATE = 3  # third.cc: dynamic threshold alpha = 1/8 for ports at the NIC rate

INITIAL_PACKETS = 4096  # the tables start small and double on demand
INITIAL_SPARE_EVENTS = 4096
INITIAL_SLOTS = 1024  # rows of sending state for started flows, doubled when a start finds none free
INITIAL_PARTITION_IDS = 1024  # rows of parts (but the bucket's), grown by the partitioning layer as it needs ids
INITIAL_PFC_ROWS = 1024
FLOW_LOG_ROWS = 16384  # a full flow log makes the kernel return, so this bounds the batch, not the run
MAX_PACKETS = 1 << 24  # about 1.6 GB of packet rows: beyond it a run stops with a clear error
MAX_EVENTS = 1 << 26


def slots_of(fl: np.ndarray, flows: np.ndarray) -> np.ndarray:
    """The slots of ``flows``, which must all be sending (started, and not yet dropped by their NIC): checked, as a slot
    of -1 would read the pool's last row."""
    slots = fl[flows, L.FL_SLOT]
    if (slots < 0).any():
        f = int(np.asarray(flows)[slots < 0].flat[0])
        state = {L.FS_PENDING: "not started", L.FS_ACTIVE: "active", L.FS_DONE: "finished"}[int(fl[f, L.FL_STATE])]
        raise RuntimeError(f"flow {f} has no sending state: it is {state} and holds no slot")
    return slots


class ResourceLimitError(RuntimeError):
    """A bounded buffer (packet pool, event queue) would exceed its hard limit."""


# the tables with a row (or a few entries) per flow: its row, paths, dependants, place in the NIC's and the active
# lists, and in Wormhole mode its link in its partition's member list (the rows per partition id follow the
# partitions alive at once: INITIAL_PARTITION_IDS)
PER_FLOW_TABLES = ("fl", "port_qps", "path_ports", "child_offset", "children", "child_gaps", "active", "pm_flow")


@dataclass
class EngineState:
    """All arrays of one run; ``arrays()`` is the argument list of the kernels."""

    g: np.ndarray
    events: np.ndarray  # the event queue (wheel.py)
    pk: np.ndarray
    pt: np.ndarray
    ptf: np.ndarray
    nd: np.ndarray
    fl: np.ndarray
    ff: np.ndarray  # [slot, FF_*] its floating-point part
    fw: np.ndarray  # [slot, FW_*] the sending state of started flows (slots.py); fl[f, FL_SLOT] is flow f's row
    port_qps: np.ndarray
    path_ports: np.ndarray
    ci: np.ndarray
    cf: np.ndarray
    rng: np.ndarray
    pfc_log: np.ndarray
    tel_time: np.ndarray  # telemetry chunk: sample times, ps
    tel_port: np.ndarray  # [row, selected port, TP_*]
    tel_flow: np.ndarray  # [row, selected flow, TF_*]
    sel_ports: np.ndarray
    sel_flows: np.ndarray
    child_offset: np.ndarray  # flows that wait for flow f: children[child_offset[f]:child_offset[f + 1]]
    children: np.ndarray
    child_gaps: np.ndarray  # each dependant's edge delay, aligned with children; empty: the table has none
    active: np.ndarray  # ids of the active flows, first g[G_N_ACTIVE] entries
    parts: np.ndarray  # [partition id, PA_*], used when a layer above groups flows into partitions; last row the bucket
    rate_ring: np.ndarray  # [slot, l] recent sending rates for the steady-state test
    seq_ring: np.ndarray  # [slot, l, 2] bytes acknowledged and bytes sent at the same samples
    flow_log: np.ndarray  # [row, FLOG_*] flow starts and completions the partitioning layer has not taken yet
    pm_flow: np.ndarray  # [flow, PM_*] and
    pm_part: np.ndarray  # [partition id, PMP_*]: the partitioning layer's member lists, which the flow log reads
    # ECN marks per data-path entry (path_ports[fl[f, FL_PATH_BEGIN] + hop]); empty, not counted, unless
    # count_marks_per_hop() gave it one per entry (runs of several jobs: marks per job and port)
    path_marks: np.ndarray

    def arrays(self) -> "Tables":
        """Every table, named as these fields (cached: the run loop passes them to the kernel at every stop)."""
        cached = self.__dict__.get("_arrays")
        if cached is None:
            cached = Tables(*(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_arrays", cached)
        return cached

    def copy(self) -> "EngineState":
        """An independent copy of every table: it runs on from here without touching this state."""
        return EngineState(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    def __setattr__(self, name, value):
        self.__dict__.pop("_arrays", None)  # a table was replaced (grown or attached)
        object.__setattr__(self, name, value)

    def count_marks_per_hop(self) -> None:
        """Count ECN marks per flow and hop of its data path (``path_marks``), before the run starts."""
        self.path_marks = np.zeros(len(self.path_ports), dtype=np.int64)

    def attach_telemetry(
        self, ports: np.ndarray, flows: np.ndarray, interval_ps: int, chunk_rows: int,
        start_ps: int = 0, end_ps: int | None = None, idle_samples: bool = False,
    ) -> None:  # fmt: skip
        """Sample ``ports`` and ``flows`` every ``interval_ps`` from ``start_ps`` (to the first sample at or after
        ``end_ps``) into chunks of ``chunk_rows`` rows. Unless ``idle_samples``, the sampler skips idle time:
        the first sample is the first point of the grid at or after the first event."""
        self.sel_ports = np.ascontiguousarray(ports, dtype=np.int64)
        self.sel_flows = np.ascontiguousarray(flows, dtype=np.int64)
        self.tel_time = np.zeros(chunk_rows, dtype=np.int64)
        self.tel_port = np.zeros((chunk_rows, len(ports), L.TP_N), dtype=np.int64)
        self.tel_flow = np.zeros((chunk_rows, len(flows), L.TF_N), dtype=np.float64)
        self.ci[L.CI_SAMPLE_INTERVAL] = interval_ps
        self.ci[L.CI_SAMPLE_END] = L.SAMPLE_NO_END if end_ps is None else end_ps
        self.ci[L.CI_SAMPLE_IDLE] = idle_samples
        first = start_ps if idle_samples else self._first_grid_point(start_ps, interval_ps)
        wheel.schedule(self.g, self.events, [first], L.EV_SAMPLE, [0])

    def _first_grid_point(self, origin: int, interval: int) -> int:
        """The first time ``origin + k * interval`` (k >= 0) at or after the earliest scheduled event."""
        pending = wheel.pending(self.events)[:, L.E_TIME]
        first = int(pending.min()) if len(pending) else origin
        return origin + max(0, -(-(first - origin) // interval)) * interval

    def attach_partitions(self, interval_ps: int, window: int, theta: float, eager: np.ndarray) -> None:
        """Turn on the steady-state test (every ``interval_ps``, over ``window`` samples, threshold ``theta``)
        and the flow log a partitioning layer reads. The run returns at the start or completion of a flow in
        ``eager`` (a boolean per flow); otherwise only when the log is full, a start touches a skipped
        partition, or a partition is steady."""
        ids = min(self.fl.shape[0], INITIAL_PARTITION_IDS)
        slots = self.fw.shape[0]
        self.parts = np.zeros((ids + 1, L.PA_N), dtype=np.int64)
        self.parts[ids, L.PA_CHANGED_AT] = np.iinfo(np.int64).max  # the bucket of unplaced flows is never steady
        self.flow_log = np.zeros((FLOW_LOG_ROWS, L.FLOG_N), dtype=np.int64)
        self.fl[:, L.FL_EAGER] = np.asarray(eager, dtype=bool)
        self.rate_ring = np.zeros((slots, window), dtype=np.float64)
        self.seq_ring = np.zeros((slots, window, 2), dtype=np.int64)
        self.ci[L.CI_STEADY_INTERVAL] = interval_ps
        self.ci[L.CI_STEADY_WINDOW] = window
        self.cf[L.CF_THETA] = theta
        wheel.schedule(self.g, self.events, [self._first_grid_point(0, interval_ps)], L.EV_STEADY_SAMPLE, [0])

    def take_chunk(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copies of the filled telemetry rows; the chunk buffer is then reused."""
        n = int(self.g[L.G_TEL_ROW])
        self.g[L.G_TEL_ROW] = 0
        return self.tel_time[:n].copy(), self.tel_port[:n].copy(), self.tel_flow[:n].copy()

    @property
    def now_ps(self) -> int:
        return int(self.g[L.G_NOW])

    @property
    def events_executed(self) -> int:
        return int(self.g[L.G_EVENTS])

    @property
    def flows_done(self) -> int:
        return int(self.g[L.G_DONE_COUNT])

    def nbytes(self) -> int:
        """Memory held by the engine's tables."""
        return sum(a.nbytes for a in self.arrays())

    def per_flow_nbytes(self) -> int:
        """Memory of the tables sized by the flow count (``PER_FLOW_TABLES``); the rest (packet pool, event queue,
        ports, the active flows' slots, telemetry) follows the topology and the traffic in flight."""
        return sum(getattr(self, name).nbytes for name in PER_FLOW_TABLES)

    @property
    def outside_bytes(self) -> int:
        """Memory the run holds outside these tables (flow table, telemetry kept in memory), set by the layer
        above so that one cap covers everything."""
        return self.__dict__.get("_outside_bytes", 0)

    @outside_bytes.setter
    def outside_bytes(self, value: int) -> None:
        self.__dict__["_outside_bytes"] = int(value)

    def _check_cap(self, extra: int, what: str) -> None:
        cap = int(self.ci[L.CI_MEMORY_CAP])
        total = self.nbytes() + self.outside_bytes + extra
        if cap and total > cap:
            raise ResourceLimitError(
                f"growing the {what} at t={self.now_ps} ps would take the run to {total / 2**30:.2f} GiB "
                f"(engine tables {self.nbytes() / 2**30:.2f} GiB, flow table and telemetry kept in memory "
                f"{self.outside_bytes / 2**30:.2f} GiB), over the {cap / 2**30:.2f} GiB cap "
                "(raise EngineConfig.memory_cap_bytes, shrink the scenario, or keep PFC on so queues stay bounded)"
            )

    def grow(self) -> None:
        """Double whichever bounded table is close to full (the kernel returned STOP_GROW)."""
        if self.g[L.G_FREE_COUNT] < L.HEADROOM_PER_EVENT:
            self._check_cap(self.pk.nbytes, "packet pool")
            old = self.pk.shape[0]
            if 2 * old > MAX_PACKETS:
                raise ResourceLimitError(
                    f"more than {MAX_PACKETS} packets in flight at t={self.now_ps} ps; the run is larger than this "
                    "engine supports (shrink the scenario or enable PFC so buffers stay bounded)"
                )
            self.pk = np.concatenate([self.pk, np.zeros_like(self.pk)])
            _link_free(self.pk, L.PK_NEXT, old, 2 * old, self.g, L.G_FREE_HEAD, L.G_FREE_COUNT)
        if self.g[L.G_SLOT_FREE_COUNT] == 0:
            self._check_cap(
                self.fw.nbytes + self.ff.nbytes + self.rate_ring.nbytes + self.seq_ring.nbytes, "pool of active flows"
            )
            old = self.fw.shape[0]
            self.fw = np.concatenate([self.fw, np.zeros_like(self.fw)])
            self.ff = np.concatenate([self.ff, np.zeros_like(self.ff)])
            self.rate_ring = np.concatenate([self.rate_ring, np.zeros_like(self.rate_ring)])
            self.seq_ring = np.concatenate([self.seq_ring, np.zeros_like(self.seq_ring)])
            _link_free(self.fw, L.FW_NEXT_FREE, old, 2 * old, self.g, L.G_SLOT_FREE, L.G_SLOT_FREE_COUNT)
        if wheel.free_rows(self.g, self.events) < L.HEADROOM_PER_EVENT:
            if 2 * self.events.shape[0] > MAX_EVENTS:
                raise ResourceLimitError(f"more than {MAX_EVENTS} pending events at t={self.now_ps} ps")
            self._check_cap(self.events.nbytes, "event queue")
            self.events = wheel.grown(self.g, self.events)
        if self.g[L.G_PFC_COUNT] + L.HEADROOM_PER_EVENT > self.pfc_log.shape[0]:
            self.pfc_log = np.concatenate([self.pfc_log, np.zeros_like(self.pfc_log)])


# What the kernel's entry takes: the tables by name (one argument instead of 26 in a fixed order). Numba passes a
# named tuple of arrays member by member, so the inner helpers keep taking just the tables they touch.
Tables = namedtuple("Tables", [f.name for f in fields(EngineState)])


def _link_free(table: np.ndarray, next_col: int, begin: int, end: int, g: np.ndarray, head: int, count: int) -> None:
    """Put rows begin..end-1 of ``table`` (linked through ``next_col``) at the front of the free list whose
    first row and length are ``g[head]`` and ``g[count]``."""
    table[begin : end - 1, next_col] = np.arange(begin + 1, end)
    table[end - 1, next_col] = g[head]
    g[head] = begin
    g[count] += end - begin


def _int_config(cfg: EngineConfig, merge_tx_done: bool = True) -> np.ndarray:
    ci = np.zeros(L.CI_N, dtype=np.int64)
    ci[L.CI_MERGE_TX_DONE] = merge_tx_done
    ci[L.CI_CC] = cfg.cc_mode
    ci[L.CI_PAYLOAD] = cfg.payload_bytes
    ci[L.CI_DATA_HDR] = DATA_HEADER_BYTES + INT_HEADER_BYTES.get(cfg.cca, 0)
    ci[L.CI_ACK_WIRE] = HPCC_ACK_WIRE_BYTES if cfg.cca == "hpcc" else ACK_WIRE_BYTES
    ci[L.CI_PFC_WIRE] = PFC_WIRE_BYTES
    ci[L.CI_VAR_WIN] = cfg.var_win
    ci[L.CI_RATE_BOUND] = cfg.rate_bound
    ci[L.CI_ACK_HIGH_PRIO] = cfg.ack_high_prio
    ci[L.CI_ECN] = cfg.enable_ecn
    ci[L.CI_PFC] = cfg.pfc
    ci[L.CI_RESERVE] = MMU_RESERVE_BYTES
    ci[L.CI_RESUME_OFFSET] = MMU_RESUME_OFFSET_BYTES
    ci[L.CI_NACK_INTERVAL] = cfg.nack_interval_ps
    ci[L.CI_RTO] = cfg.effective_rto_ps
    ci[L.CI_ALPHA_INTERVAL] = cfg.alpha_resume_interval_ps
    ci[L.CI_DECREASE_INTERVAL] = cfg.rate_decrease_interval_ps
    ci[L.CI_RP_TIMER] = cfg.rp_timer_ps
    ci[L.CI_FAST_RECOVERY] = cfg.fast_recovery_times
    ci[L.CI_CLAMP] = cfg.clamp_target_rate
    ci[L.CI_RATE_AI] = cfg.rate_ai_bps
    ci[L.CI_RATE_HAI] = cfg.rate_hai_bps
    ci[L.CI_MIN_RATE] = cfg.min_rate_bps
    ci[L.CI_DCTCP_RATE_AI] = cfg.dctcp_rate_ai_bps
    ci[L.CI_TIME_QUANTUM] = cfg.time_quantum_ps
    ci[L.CI_MEMORY_CAP] = cfg.memory_cap_bytes or 0
    ci[L.CI_INT_MODE] = {"hpcc": L.INT_MODE_HOPS, "timely": L.INT_MODE_TS}.get(cfg.cca, L.INT_MODE_NONE)
    ci[L.CI_INT_MULTI] = cfg.int_multi
    ci[L.CI_MI_THRESH] = cfg.mi_thresh
    ci[L.CI_MULTI_RATE] = cfg.multi_rate
    ci[L.CI_SAMPLE_FEEDBACK] = cfg.sample_feedback
    ci[L.CI_FAST_REACT] = cfg.fast_react
    ci[L.CI_T_LOW] = cfg.timely_t_low_ps
    ci[L.CI_T_HIGH] = cfg.timely_t_high_ps
    ci[L.CI_MIN_RTT] = cfg.timely_min_rtt_ps
    return ci


def _float_config(cfg: EngineConfig) -> np.ndarray:
    cf = np.zeros(L.CF_N, dtype=np.float64)
    cf[L.CF_G] = cfg.ewma_gain
    cf[L.CF_RATE_FIRST_CNP] = cfg.rate_on_first_cnp
    cf[L.CF_U_TARGET] = cfg.u_target
    cf[L.CF_TIMELY_ALPHA] = cfg.timely_alpha
    cf[L.CF_TIMELY_BETA] = cfg.timely_beta
    return cf


def estimate_bytes(n_flows: int, n_ports: int, n_nodes: int, path_entries: int) -> int:
    """Memory the engine's tables need before the run (packet pool and event queue start small and grow)."""
    rows = n_flows * (L.FL_N + 6) + n_ports * (L.PT_N + L.PTF_N) + n_nodes * L.ND_N
    event_rows = wheel.TABLE_ROWS + n_flows + INITIAL_SPARE_EVENTS
    return 8 * (rows + path_entries + event_rows * L.E_N + INITIAL_PACKETS * L.PK_N)


ROWS_AT_ONCE = 4096  # rows of the flow table filled together: 2 MB, which stay in cache across its columns


def _rows(n: int, width: int, columns: dict) -> np.ndarray:
    """An (n, width) int64 table, zero but for ``columns`` (column -> per-row values or one value), filled a block of
    rows at a time: written column by column over the whole table, each column is a pass over every row's cache
    line (MoE-32x22B on 1024 GPUs, 1.4 M rows: ``build_state`` 1.41 -> 1.09 s; most of the rest is the first touch
    of the table's 680 MB)."""
    table = np.zeros((n, width), dtype=np.int64)
    for a in range(0, n, ROWS_AT_ONCE):
        block = table[a : a + ROWS_AT_ONCE]
        for column, values in columns.items():
            block[:, column] = values if np.isscalar(values) else values[a : a + ROWS_AT_ONCE]
    return table


def build_state(
    topo, flows, paths, cfg: EngineConfig, window_bytes: np.ndarray, base_rtt_ns: np.ndarray,
    merge_tx_done: bool = True,
) -> EngineState:  # fmt: skip
    """Arrays for a run. ``paths`` gives per-flow egress ports (CSR); ``window_bytes`` per flow (0: none);
    ``base_rtt_ns`` per flow is HPCC's EWMA horizon (maxRtt with GLOBAL_T). ``merge_tx_done=False`` puts every
    switch port's TX_DONE in the event queue (the same results, more events: see port.py)."""
    n_ports, n_flows = topo.n_ports, len(flows)
    if n_flows > np.iinfo(np.int32).max:
        raise InputError(
            "flows", f"{n_flows} flows: the engine keeps dependants as 32-bit flow ids", "split the scenario"
        )
    need = estimate_bytes(n_flows, n_ports, topo.n_nodes, len(paths.data_ports) + len(paths.ack_ports))
    if cfg.memory_cap_bytes and need > cfg.memory_cap_bytes:
        raise InputError(
            "EngineConfig.memory_cap_bytes",
            f"the scenario's {n_flows} flows and {n_ports} ports need "
            f"about {need / 2**30:.2f} GiB of engine tables before the run, over the "
            f"{cfg.memory_cap_bytes / 2**30:.2f} GiB cap",
            "raise the cap or split the scenario",
        )
    port_node = topo.port_node()
    rate = np.repeat(topo.link_rate_bps, 2).astype(np.int64)
    delay = np.repeat(topo.link_delay_ps, 2).astype(np.int64)
    is_switch_port = topo.is_switch[port_node]

    pt = np.zeros((n_ports, L.PT_N), dtype=np.int64)
    ptf = np.zeros((n_ports, L.PTF_N), dtype=np.float64)
    pt[:, L.PT_NODE] = port_node
    pt[:, L.PT_PEER] = np.arange(n_ports) ^ 1
    pt[:, L.PT_RATE] = rate
    pt[:, L.PT_DELAY] = delay
    pt[:, L.PT_IS_SWITCH] = is_switch_port
    for col in (L.PT_CTRL_HEAD, L.PT_CTRL_TAIL, L.PT_DATA_HEAD, L.PT_DATA_TAIL, L.PT_WAKE_AT, L.PT_FREE_AT):
        pt[:, col] = -1
    pt[:, L.PT_IFINDEX] = topo.port_ifindex()
    pt[:, L.PT_PART] = -1

    # third.cc takes the NIC rate from the first device of the lowest-numbered host
    first_host = int(np.flatnonzero(~topo.is_switch)[0])
    nic_rate = int(rate[np.flatnonzero(port_node == first_host)[0]])
    nd = np.zeros((topo.n_nodes, L.ND_N), dtype=np.int64)
    nd[:, L.ND_IS_SWITCH] = topo.is_switch
    nd[topo.is_switch, L.ND_BUFFER] = cfg.buffer_bytes
    for p in np.flatnonzero(is_switch_port):
        r = int(rate[p])
        if cfg.cca == "hpcc" and r not in INT_LINE_RATES:
            raise InputError(
                f"topology (switch {port_node[p]}, port {p})",
                f"HPCC's INT cannot encode a {r} bit/s link",
                f"use link speeds among {', '.join(str(x) for x in INT_LINE_RATES)} bit/s",
            )
        kmin, kmax, pmax = cfg.ecn_for_rate(r, f"ECN maps (switch {port_node[p]}, link speed of port {p})")
        pt[p, L.PT_KMIN], pt[p, L.PT_KMAX], ptf[p, L.PTF_PMAX] = kmin, kmax, pmax
        # third.cc: headroom = 3 x rate x delay (delay in ns, integer arithmetic)
        pt[p, L.PT_HEADROOM] = r * (int(delay[p]) // 1000) // 8 // 1_000_000_000 * 3
        shift = PFC_SHIFT_AT_NIC_RATE
        while r > nic_rate and shift > 0:
            shift -= 1
            r //= 2
        pt[p, L.PT_PFC_SHIFT] = shift
        node = port_node[p]
        nd[node, L.ND_TOTAL_HDRM] += pt[p, L.PT_HEADROOM]
        nd[node, L.ND_TOTAL_RSRV] += MMU_RESERVE_BYTES
    short = np.flatnonzero(topo.is_switch & (nd[:, L.ND_TOTAL_HDRM] + nd[:, L.ND_TOTAL_RSRV] >= nd[:, L.ND_BUFFER]))
    if len(short):
        s = int(short[0])
        need = int(nd[s, L.ND_TOTAL_HDRM] + nd[s, L.ND_TOTAL_RSRV])
        raise InputError(
            "EngineConfig.buffer_bytes",
            f"switch {s} needs {need} B of PFC headroom and reserve, more than the {cfg.buffer_bytes} B buffer",
            f"raise the buffer above {need} B (BUFFER_SIZE in MB)",
        )

    path_ports = np.concatenate([paths.data_ports, paths.ack_ports]).astype(np.int64)
    nic_port = path_ports[paths.data_offset[:-1]]
    per_port = np.bincount(nic_port, minlength=n_ports)
    pt[:, L.PT_QP_BEGIN] = np.concatenate([[0], np.cumsum(per_port)[:-1]])
    n_deps = np.diff(flows.dep_offset)
    n_data = len(paths.data_ports)
    fl = _rows(n_flows, L.FL_N, {
        L.FL_SIZE: flows.size, L.FL_START: flows.start_ps,
        L.FL_PATH_BEGIN: paths.data_offset[:-1], L.FL_PATH_LEN: np.diff(paths.data_offset),
        L.FL_APATH_BEGIN: n_data + paths.ack_offset[:-1], L.FL_APATH_LEN: np.diff(paths.ack_offset),
        L.FL_WIN: window_bytes, L.FL_BASE_RTT: base_rtt_ns, L.FL_NIC_PORT: nic_port, L.FL_DEPS_LEFT: n_deps,
        L.FL_GAP: flows.gap_ps, L.FL_DONE_ORDER: -1, L.FL_FINISH: -1, L.FL_STARTED_AT: -1, L.FL_PART: -1,
        L.FL_SLOT: -1, L.FL_DELIVERED_AT: -1,
    })  # fmt: skip
    child_offset = flows.dependant_offset()
    children = np.empty(len(flows.dep_ids), dtype=np.int32)  # flow ids: 4 B per dependency edge, not 8
    # per-edge delays in children's order only when the table has any: an empty array otherwise (no memory, and the
    # kernels see the same types, so no second compile)
    edge_gaps = flows.dep_gap_ps is not None
    dep_gaps = np.ascontiguousarray(flows.dep_gap_ps if edge_gaps else np.zeros(0), dtype=np.int64)
    child_gaps = np.empty(len(children) if edge_gaps else 0, dtype=np.int64)
    qp.fill_dependants(
        np.ascontiguousarray(flows.dep_offset, dtype=np.int64), np.ascontiguousarray(flows.dep_ids, dtype=np.int32),
        dep_gaps, child_offset[:-1].copy(), children, child_gaps,
    )  # fmt: skip

    g = np.zeros(L.G_N, dtype=np.int64)
    g[L.G_FREE_HEAD] = -1
    # flows without dependencies start at their start time, in (time, file order) as the reference schedules them
    free_flows = np.flatnonzero(n_deps == 0)
    order = free_flows[np.lexsort((free_flows, flows.start_ps[free_flows]))]
    events = wheel.new_events(g, len(order) + INITIAL_SPARE_EVENTS)
    wheel.schedule(g, events, flows.start_ps[order], L.EV_FLOW_START, order)
    g[L.G_FLOW_EVENT] = -1
    pk = np.zeros((INITIAL_PACKETS, L.PK_N), dtype=np.int64)
    _link_free(pk, L.PK_NEXT, 0, pk.shape[0], g, L.G_FREE_HEAD, L.G_FREE_COUNT)
    g[L.G_SLOT_FREE] = -1
    fw = np.zeros((max(1, min(n_flows, INITIAL_SLOTS)), L.FW_N), dtype=np.int64)
    _link_free(fw, L.FW_NEXT_FREE, 0, fw.shape[0], g, L.G_SLOT_FREE, L.G_SLOT_FREE_COUNT)
    ci = _int_config(cfg, merge_tx_done)
    ci[L.CI_RELEASE_ON_DELIVERY] = flows.release_on_delivery  # a rule of the traffic (FlowTable), not of the network

    return EngineState(
        g=g,
        events=events,
        pk=pk,
        pt=pt,
        ptf=ptf,
        nd=nd,
        fl=fl,
        ff=np.zeros((fw.shape[0], L.FF_N)),
        fw=fw,
        port_qps=np.zeros(max(n_flows, 1), dtype=np.int64),
        path_ports=path_ports,
        ci=ci,
        cf=_float_config(cfg),
        rng=new_state(cfg.seed) if cfg.rng == "xorshift" else ns3_state(cfg.seed, setup_streams(topo.n_nodes)),
        pfc_log=np.zeros((INITIAL_PFC_ROWS, L.PFC_LOG_N), dtype=np.int64),
        tel_time=np.zeros(1, dtype=np.int64),
        tel_port=np.zeros((1, 0, L.TP_N), dtype=np.int64),
        tel_flow=np.zeros((1, 0, L.TF_N), dtype=np.float64),
        sel_ports=np.zeros(0, dtype=np.int64),
        sel_flows=np.zeros(0, dtype=np.int64),
        child_offset=child_offset,
        children=children,
        child_gaps=child_gaps,
        active=np.zeros(max(n_flows, 1), dtype=np.int64),
        parts=np.zeros((1, L.PA_N), dtype=np.int64),
        rate_ring=np.zeros((fw.shape[0], 1), dtype=np.float64),
        seq_ring=np.zeros((fw.shape[0], 1, 2), dtype=np.int64),
        flow_log=np.zeros((1, L.FLOG_N), dtype=np.int64),
        pm_flow=np.full((1, 1), -1, dtype=np.int32),
        pm_part=np.full((1, 1), -1, dtype=np.int64),
        path_marks=np.zeros(0, dtype=np.int64),
    )
