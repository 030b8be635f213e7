"""Column numbers of the engine's struct-of-arrays state, event kinds and stop reasons.

Each table is one 2-D NumPy array with a row per entity (packet, port, node, flow) and a
column per field, so a kernel reads ``pt[port, PT_RATE]``. Numba freezes these module
constants at compile time, which makes them free in the hot loop.
"""

# --- global scalars: g[int64] ---
G_NOW = 0  # current simulated time, ps
G_PENDING = 1  # events scheduled and not yet run
G_SEQ = 2  # next event sequence number: ties at equal time pop in scheduling order
G_FREE_HEAD = 3  # first free packet slot, -1 when the pool is empty
G_FREE_COUNT = 4
G_EVENTS = 5  # events executed so far
G_PFC_COUNT = 6  # rows used in the PFC log
G_DONE_COUNT = 7  # flows completed
G_DROPS = 8  # packets dropped at switch ingress (buffer exhausted, PFC off)
G_ECN_MARKS = 9
G_PKTS_IN_USE = 10
G_TEL_ROW = 11  # rows filled in the current telemetry chunk
G_FINAL_SAMPLED = 12  # the sample after the last completion was taken
G_FLOW_EVENT = 13  # partitioned runs: the flow that just started or completed, -1 when none
G_N_ACTIVE = 14  # flows in the active list
G_VIOLATION = 15  # invariant checking: VIOLATION_* code of the first violation, 0 when none
G_VIOLATION_AT = 16  # its time, ps
G_VIOLATION_WHERE = 17  # the port (or packet) involved
G_FLOW_LOG_N = 18  # partitioned runs: rows of the flow log not yet taken by the layer above
G_LOG_DUE = 19  # partitioned runs: 1 when an FL_EAGER flow's event must be taken once this instant's events ran
G_CUR_SEQ = 20  # sequence number of the event running (G_SEQ once every event up to G_NOW has run): see PT_FREE_AT
G_WHEEL_BASE = 21  # event queue (wheel.py): first bucket of the wheel's window
G_WHEEL_COUNT = 22  # events in the wheel
G_OVERFLOW = 23  # events in the overflow heap, beyond the window
G_EVENT_FREE = 24  # first free event row, -1 when none
G_UNLINKED = 25  # 1 when Python scheduled events that wheel.link_scheduled must link in (wheel.schedule)
G_MARKED = 26  # partitioned runs: 1 when a flow passed its FL_MARK since the layer above last looked
G_SLOT_FREE = 27  # first free row of fw (the sending state of started flows), -1 when none
G_SLOT_FREE_COUNT = 28
G_WENT_BACK = 29  # 1 once a QP went back to resend (sent bytes are not monotone then: see PA_SPENT)
G_LOG_STARTS = 30  # partitioned runs: flow starts among the G_FLOW_LOG_N rows of the flow log
G_N = 31

VIOLATION_TIME_BACKWARDS = 1
VIOLATION_PAUSED_TRANSMIT = 2

# --- event queue: events[int64] (wheel.py), after its bucket table one row per event ---
E_TIME = 0
E_SEQ = 1
E_KIND = 2  # EV_*, EV_NONE on a free row
E_A = 3  # port, packet or flow, by kind
E_B = 4  # timer generation, so cancelled timers are recognised and skipped
E_NEXT = 5  # next event of its bucket (-1: the last); on a free row the next free row
E_PREV = 6  # previous event of its bucket (-1: the first)
E_HEAP = 7  # not this row's own field: entry (row - wheel.TABLE_ROWS) of the overflow heap
E_N = 8  # 64-byte rows

EV_NONE = -1

EV_FLOW_START = 0  # a = flow
EV_TX_DONE = 1  # a = port: its transmitter is free again
EV_ARRIVE = 2  # a = packet: it reached the far end of the link of pk[a, PK_PORT]
EV_NIC_WAKE = 3  # a = port: the earliest paced QP of this NIC may send
EV_DCQCN_ALPHA = 4  # a = flow, b = generation
EV_DCQCN_DECREASE = 5
EV_DCQCN_INCREASE = 6
EV_RTO = 7  # a = flow, b = generation: go-back-N timeout check
EV_SAMPLE = 8  # telemetry: record the selected ports and flows
EV_STEADY_SAMPLE = 9  # partitioned runs: sample every active flow's rate for the steady-state test

# --- packet pool: pk[int64], one row per packet slot ---
PK_FLOW = 0
PK_KIND = 1
PK_SEQ = 2  # data: first byte; ACK/NACK: next byte expected by the receiver
PK_WIRE = 3  # bytes on the wire
PK_PAYLOAD = 4
PK_HOP = 5  # index along the flow's data or ACK path of the port it was last sent from
PK_ECN = 6  # data: CE mark; ACK: CNP flag (the ECN echo)
PK_PORT = 7  # egress port it is queued at / was last sent from
PK_INPORT = 8  # ingress port at the current switch (buffer accounting), -1 elsewhere
PK_NEXT = 9  # next packet in a FIFO or in the free list
PK_TS = 10  # time the sender put it on the wire
PK_PAUSE = 11  # PFC frame: 1 pause, 0 resume
PK_INT_NHOP = 12  # INT hops pushed so far (HPCC); ACKs carry their data packet's copy
PK_INT_BASE = 13  # hop h occupies columns PK_INT_BASE + INT_FIELDS * h + INT_*
PK_N = 13 + 5 * 4  # INT_MAX_HOPS x INT_FIELDS

# --- in-band telemetry (int-header.h): 5 hops of packed fields in the reference's units ---
INT_MAX_HOPS = 5
INT_FIELDS = 4
INT_TIME = 0  # ns, low 24 bits
INT_BYTES = 1  # cumulative tx bytes / (128 x INT_MULTI), low 20 bits
INT_QLEN = 2  # egress queue bytes / (80 x INT_MULTI), low 17 bits
INT_RATE = 3  # line rate, bit/s
INT_TIME_MASK = (1 << 24) - 1
INT_BYTES_MASK = (1 << 20) - 1
INT_QLEN_MASK = (1 << 17) - 1
INT_BYTE_UNIT = 128
INT_QLEN_UNIT = 80
INT_MODE_NONE = 0
INT_MODE_HOPS = 1  # HPCC: per-hop records
INT_MODE_TS = 2  # TIMELY: only the sender's timestamp (PK_TS)

KIND_DATA = 0
KIND_ACK = 1
KIND_NACK = 2
KIND_PFC = 3

# --- ports: pt[int64], one row per port (two per link) ---
PT_NODE = 0
PT_PEER = 1  # the port at the other end of the link
PT_RATE = 2  # bit/s
PT_DELAY = 3  # propagation delay, ps
PT_IS_SWITCH = 4  # owner is a switch
# the transmitter is busy until its TX_DONE, (PT_FREE_AT, PT_FREE_SEQ) in event order, has run; a switch port's
# TX_DONE is only put in the event queue when a frame waits for it (CI_MERGE_TX_DONE), -1 before the first frame
PT_FREE_AT = 5
PT_PAUSED = 6  # data class paused by a PFC frame from the peer
PT_CTRL_HEAD = 7  # strict-priority queue 0 (PFC frames)
PT_CTRL_TAIL = 8
PT_DATA_HEAD = 9  # data class FIFO; at hosts it is the NIC's ACK queue
PT_DATA_TAIL = 10
PT_DATA_BYTES = 11  # egress bytes queued in the data class
PT_TX_BYTES = 12  # cumulative bytes sent
PT_WAKE_AT = 13  # pending EV_NIC_WAKE time, -1 when none
PT_RR_LAST = 14  # NIC round-robin position
PT_QP_BEGIN = 15  # slice of port_qps holding this NIC's queue pairs
PT_QP_COUNT = 16
PT_KMIN = 17  # ECN thresholds, bytes (switch ports)
PT_KMAX = 18
PT_ING_BYTES = 19  # ingress accounting of packets that entered the switch here
PT_HDRM_BYTES = 20
PT_HEADROOM = 21
PT_PFC_SHIFT = 22
PT_PAUSING = 23  # this ingress has paused its upstream and owes it a resume
PT_IFINDEX = 24
PT_ECN_MARKS = 25
PT_PAUSE_FRAMES = 26  # PFC pause frames received
PT_WAKE_GEN = 27  # generation of the pending EV_NIC_WAKE (an HPCC rate change may move it earlier)
PT_PART = 28  # partition (group) id of the flows using this port; -1 when none
PT_SKIPPED_BYTES = 29  # bytes this port would have sent during fast-forwarded windows
PT_SKIP_CURRENT = 30  # part of PT_SKIPPED_BYTES that belongs to the skip in progress
PT_FREE_SEQ = 31  # sequence number reserved for the TX_DONE at PT_FREE_AT
PT_TX_DONE_QUEUED = 32  # 1 while that TX_DONE is in the event queue
PT_N = 33

PTF_PMAX = 0
PTF_N = 1

# --- nodes: nd[int64] ---
ND_IS_SWITCH = 0
ND_SHARED_USED = 1
ND_BUFFER = 2
ND_TOTAL_HDRM = 3
ND_TOTAL_RSRV = 4
ND_N = 5

# --- flows (queue pairs): fl[flow, FL_*] (int64), a row per flow for its whole life: what exists before the flow
# starts (its inputs, the dependencies it waits for), its results, and the receiver's state ---
FL_SIZE = 0
FL_START = 1
FL_PATH_BEGIN = 2  # data path: egress ports in path_ports[begin : begin + len]
FL_PATH_LEN = 3
FL_APATH_BEGIN = 4  # ACK path
FL_APATH_LEN = 5
FL_RCV_NXT = 6
FL_STATE = 7  # FS_*
FL_FINISH = 8  # time the last ACK reached the sender
FL_DONE_ORDER = 9
FL_WIN = 10  # bytes in flight allowed (0: no window)
FL_NACK_TIMER = 11
FL_LAST_NACK = 12
FL_CNPS = 13  # CNPs received
FL_RETX_BYTES = 14  # bytes sent again after a NACK or timeout
FL_TIMEOUTS = 15
FL_BASE_RTT = 16  # ns: maxRtt (GLOBAL_T) or the pair's RTT
FL_NIC_PORT = 17  # the sender's NIC port (first port of the data path)
FL_DEPS_LEFT = 18  # dependencies not yet completed (or delivered: CI_RELEASE_ON_DELIVERY); it starts at 0
FL_GAP = 19  # compute time between the last dependency completing and the start, ps
FL_READY_AT = 20  # latest dependency completion (or delivery) + gap so far
FL_STARTED_AT = 21  # when the QP actually started (after its dependencies); -1 before
FL_PART = 22  # partition (group) id given by the layer above; -1 when none
FL_ACTIVE_POS = 23  # index in the active list
FL_SKIPPED_BYTES = 24  # bytes credited by fast-forwarding rather than sent packet by packet
FL_PKTS_SENT = 25  # data packets put on the wire (invariant: sent = delivered + dropped + in flight)
FL_PKTS_DELIVERED = 26
FL_PKTS_DROPPED = 27
FL_EAGER = 28  # partitioned runs, 1: the layer above looks at this flow's start and completion at once
FL_SLOT = 29  # row of the flow's sending state (fw, ff, rate_ring, seq_ring) from its start until its NIC drops it
FL_DELIVERED_AT = 30  # when the last byte reached the receiver in order (FL_RCV_NXT reached the size); -1 before
FL_N = 31

# --- the sending state of started flows: fw[slot, FW_*] (int64) and ff[slot, FF_*] (float64) ---
# A flow takes a slot when it starts and gives it back when its NIC drops the finished QP from its round robin (the
# last place that reads a finished flow's sender state), so these rows, and the steady test's rings, follow the
# active set rather than the flow count (state.py grows the pool on demand). The sender's sequence numbers, pacing,
# rate, timer generations and what the CCAs and the steady test keep live here; fl keeps what exists before the
# start and after the end (inputs, dependencies, results, the receiver's state that late duplicates still touch).
# A timer of a finished flow is dropped on the flow's state before its generation is looked at.
FW_NEXT_FREE = 0  # free slots are linked through this column
FW_SND_NXT = 1
FW_SND_UNA = 2
FW_NEXT_AVAIL = 3  # pacing: earliest time the NIC may send this QP again
FW_RATE = 4  # bit/s
FW_MAX_RATE = 5
FW_LAST_PROGRESS = 6
FW_TIMER_GEN = 7  # bumping it cancels the DCQCN alpha/decrease timers and the RTO
FW_RP_GEN = 8  # bumping it cancels the DCQCN increase timer
FW_LAST_PKT_WIRE = 9  # size of the last packet sent (HPCC rate changes re-pace it)
FW_SKIP_CURRENT = 10  # bytes credited by the skip in progress (telemetry spreads them over the skip)
FW_MARK = 11  # Wormhole memo: bytes sent at which the kernel returns once (a watched flow nears its end); 0: none
FW_HOP_BASE = FW_MARK + 1  # HPCC: the INT hops of the last ACK, INT_FIELDS per hop
FW_HOP_RC = FW_HOP_BASE + INT_MAX_HOPS * INT_FIELDS  # MULTI_RATE: reference rate per hop
FW_HOP_STAGE = FW_HOP_RC + INT_MAX_HOPS
FW_CYC_ROSE = FW_HOP_STAGE + INT_MAX_HOPS  # DCQCN cycle test: 1 once the rate rose since its last cut
FW_CYC_N = FW_CYC_ROSE + 1  # cycle starts (cuts after a rise) held, at most CYCLE_MARKS
FW_CYC_POS = FW_CYC_N + 1  # next slot of the ring of cycle starts
FW_CYC_MARKS = FW_CYC_POS + 1  # CYCLE_MARKS slots of (time, bytes acknowledged, bytes sent); see rate_window.py
CYCLE_MARKS = 4  # at most CYCLE_MARKS - 1 whole cycles in the DCQCN cycle test
# the steady test's window, kept as samples come (the sums are exact: rates are whole bit/s, < 2**53 over a window)
FW_RING_OLDER = FW_CYC_MARKS + 3 * CYCLE_MARKS  # sum of the window's older half of rate samples
FW_RING_NEWER = FW_RING_OLDER + 1  # and of its newer half
FW_RING_LO = FW_RING_NEWER + 1  # the window's lowest rate sample
FW_RING_HI = FW_RING_LO + 1  # and its highest
FW_TARGET = FW_RING_HI + 1  # DCQCN target rate
FW_STAGE = FW_TARGET + 1  # DCQCN increase stage
FW_ALPHA_CNP = FW_STAGE + 1
FW_DEC_CNP = FW_ALPHA_CNP + 1
FW_FIRST_CNP = FW_DEC_CNP + 1
FW_ECN_CNT = FW_FIRST_CNP + 1  # DCTCP
FW_LAST_UPDATE_SEQ = FW_ECN_CNT + 1
FW_BATCH = FW_LAST_UPDATE_SEQ + 1
FW_CA_STATE = FW_BATCH + 1
FW_HIGH_SEQ = FW_CA_STATE + 1
FW_CUR_RATE = FW_HIGH_SEQ + 1  # HPCC/TIMELY reference rate, committed once per RTT
FW_LAST_RTT = FW_CUR_RATE + 1  # TIMELY, ps
FW_RING_N = FW_LAST_RTT + 1  # rate samples held in the flow's steady-test ring
FW_RING_POS = FW_RING_N + 1
FW_STEADY = FW_RING_POS + 1  # samples the flow's steady verdict covers (0: not steady); see rate_window.py
FW_CYC_STEADY = FW_STEADY + 1  # 1: FW_STEADY is the DCQCN cycle test's verdict (shares hold over whole cycles)
FW_N = FW_CYC_STEADY + 1

FF_ALPHA = 0  # DCQCN or DCTCP alpha (ff rows are slots, as fw's)
FF_U = 1  # HPCC normalised utilisation (EWMA)
FF_RTT_DIFF = 2  # TIMELY, ps
FF_HOP_U = 3  # MULTI_RATE: utilisation per hop
FF_GOODPUT = FF_HOP_U + INT_MAX_HOPS  # bytes acknowledged per ps over the steady-test window
FF_N = FF_GOODPUT + 1

FS_PENDING = 0
FS_ACTIVE = 1
FS_DONE = 2

# --- integer configuration: ci[int64] ---
CI_CC = 0  # CC_DCQCN / CC_DCTCP
CI_PAYLOAD = 1
CI_DATA_HDR = 2  # header bytes per data packet on the wire
CI_ACK_WIRE = 3
CI_PFC_WIRE = 4
CI_VAR_WIN = 5
CI_RATE_BOUND = 6
CI_ACK_HIGH_PRIO = 7
CI_ECN = 8
CI_PFC = 9
CI_RESERVE = 10
CI_RESUME_OFFSET = 11
CI_NACK_INTERVAL = 12
CI_RTO = 13
CI_ALPHA_INTERVAL = 14
CI_DECREASE_INTERVAL = 15
CI_RP_TIMER = 16
CI_FAST_RECOVERY = 17
CI_CLAMP = 18
CI_RATE_AI = 19
CI_RATE_HAI = 20
CI_MIN_RATE = 21
CI_DCTCP_RATE_AI = 22
CI_TIME_QUANTUM = 23  # serialisation times are truncated to this many ps (1000: the reference's 1 ns)
CI_INT_MODE = 24
CI_INT_MULTI = 25
CI_MI_THRESH = 26
CI_MULTI_RATE = 27
CI_SAMPLE_FEEDBACK = 28
CI_FAST_REACT = 29
CI_T_LOW = 30  # TIMELY thresholds, ps
CI_T_HIGH = 31
CI_MIN_RTT = 32
CI_SAMPLE_INTERVAL = 33  # telemetry interval, ps (0: off)
CI_STEADY_INTERVAL = 34  # steady-test sampling interval, ps (0: plain packet mode)
CI_STEADY_WINDOW = 35  # l: samples in the steady-test window
CI_CHECK = 36  # 1: check invariants inside the kernel
CI_MEMORY_CAP = 37  # bytes the engine's tables may grow to (0: no cap)
CI_SAMPLE_END = 38  # telemetry: the last sample is the first one at or after this time, ps (SAMPLE_NO_END: none)
CI_SAMPLE_IDLE = 39  # telemetry: 1 samples through idle periods too (0: the sampler jumps over them)
CI_MERGE_TX_DONE = 40  # 1: a switch port's TX_DONE is scheduled only when a frame waits for it (see port.py)
CI_STEADY_LINE = 41  # DCQCN: samples of the at-line-rate steady test (0: off); see rate_window.py
CI_STEADY_CYCLES = 42  # DCQCN: whole rate cycles of the cycle steady test (0: off); see rate_window.py
CI_QUIET_TAIL = 43  # partitioned runs: bytes left to send below which a flow is not looked up (0: none); flow_log.py
CI_RELEASE_ON_DELIVERY = 44  # 1: dependants start when the last byte is delivered, not ACKed (FlowTable's flag)
CI_N = 45
SAMPLE_NO_END = 2**62  # CI_SAMPLE_END of a sampler without a window: it stops after the last completion

CF_G = 0
CF_RATE_FIRST_CNP = 1
CF_U_TARGET = 2
CF_TIMELY_ALPHA = 3
CF_TIMELY_BETA = 4
CF_THETA = 5  # steady-state threshold on (max - min) / mean of the rate window
CF_N = 6

CC_DCQCN = 1  # the reference's CC_MODE numbers
CC_HPCC = 3
CC_TIMELY = 7
CC_DCTCP = 8

# --- why a kernel call returned ---
STOP_TIME = 0  # reached the requested time
STOP_ALL_DONE = 1  # every flow completed
STOP_GROW = 2  # packet pool, event queue or PFC log needs more room: grow and call again
STOP_IDLE = 3  # no event left although flows are unfinished
STOP_CHUNK = 4  # the telemetry chunk is full: hand it to Python and call again
STOP_FLOW_EVENT = 5  # partitioned runs: the flow log needs the layer above now (full, eager, or a skip was touched)
STOP_STEADY = 6  # partitioned runs: some partition has every flow steady (parts[:, PA_CANDIDATE]); take the log first
STOP_INVARIANT = 7  # invariant checking found a violation (g[G_VIOLATION*])

# --- partitions: parts[int64], one row per partition id (ids are < number of flows), then one more row:
# the bucket of started flows the layer above has not placed yet (never a candidate) ---
PA_FLOWS = 0  # active flows in the partition, counted at the last steady sample
PA_UNSTEADY = 1
PA_SKIP_END = 2  # > 0 while the partition is fast-forwarded: its events resume at this time
PA_CANDIDATE = 3  # every flow steady at the last sample and not skipping
PA_RETRY_AT = 4  # no new skip before this time (the last attempt found too little to skip)
PA_SKIP_START = 5
PA_CHANGED_AT = 6  # last change of membership (or end of a memo jump): the steady window must start after it
PA_LEFT_AT = 7  # earliest completion of a member that the layer above has not taken yet (0: none)
PA_SPENT = 8  # 1: no member has more than CI_QUIET_TAIL left to send (found by the flow log; placement clears it)
PA_N = 9

# --- the partitions' member lists, kept by the layer above (wormhole/partition.py; its other columns are its own):
# pm_flow[flow, PM_NEXT] the next member of the flow's partition (-1: the last), pm_part[id, PMP_HEAD] the first ---
PM_NEXT = 0
PMP_HEAD = 0

# --- flow log: flow_log[int64], the flow starts and completions since the layer above last looked ---
FLOG_FLOW = 0
FLOG_TIME = 1
FLOG_STARTED = 2  # 1: the flow started, 0: it completed
FLOG_N = 3

# --- telemetry chunk columns: per port tel_port[row, i, TP_*], per flow tel_flow[row, j, TF_*] ---
TP_TX_BYTES = 0  # cumulative bytes sent
TP_QUEUE = 1  # data-class egress bytes queued
TP_PAUSED = 2  # 1 while PFC-paused
TP_ECN_MARKS = 3  # cumulative ECN marks
TP_N = 4
TF_ACTIVE = 0  # 1 between start and completion
TF_RATE = 1  # sending rate of the CCA, bit/s
TF_WINDOW = 2  # bytes allowed in flight (0: no window)
TF_ACKED = 3  # bytes acknowledged
TF_INFLIGHT = 4
TF_ALPHA = 5  # DCQCN / DCTCP alpha
TF_TARGET = 6  # DCQCN target rate, bit/s
TF_U = 7  # HPCC utilisation
TF_RTT = 8  # TIMELY: last RTT sample, ps
TF_SKIPPING = 9  # 1 while the flow's partition is fast-forwarded
TF_N = 10

# PFC log rows: time_ps, node, ifindex, type (1 pause, 0 resume)
PFC_LOG_N = 4

#: room that one event can need at most (packets allocated, events pushed, log rows)
HEADROOM_PER_EVENT = 16
