"""Every knob of the packet engine, in one validated record.

Names follow the reference's ``config.txt`` keys (lower-cased), converted to engine units:
rates in bit/s, times in picoseconds, sizes in bytes. Presets live in ``presets.py``.
"""

import json
import math
import os
from dataclasses import asdict, dataclass, field, replace

from wormhole_lab.engine.rng_ns3 import M2, check_seed
from wormhole_lab.errors import InputError

CCA_NAMES = ("dcqcn", "hpcc", "timely", "dctcp")
"""Congestion-control algorithms the engine runs; CC_MODE 1, 3, 7 and 8 of the reference."""

RNG_NAMES = ("xorshift", "ns3")
"""Generators of the ECN draws (EngineConfig.rng)."""

CC_MODE_OF = {"dcqcn": 1, "hpcc": 3, "timely": 7, "dctcp": 8}
INT_LINE_RATES = (25 * 10**9, 50 * 10**9, 100 * 10**9, 200 * 10**9, 400 * 10**9)
"""Link speeds an INT hop can encode (int-header.h lineRateValues); HPCC needs every switch port at one."""

# a run without a stop time runs to this instant at most (53 days): far beyond any run, far from int64 overflow
MAX_STOP_TIME_PS = 2**62
DEFAULT_RTO_PS = 4_000_000_000  # 4 ms: far above any RTT in a data centre, short enough to recover in a test


def _half_of_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


@dataclass(frozen=True)
class EngineConfig:
    """The effective parameters of one run (the "run manifest")."""

    cca: str
    # packets
    payload_bytes: int = 1000  # PACKET_PAYLOAD_SIZE
    # switches: shared buffer, ECN per link speed, PFC
    buffer_bytes: int = 32 * 1024 * 1024  # BUFFER_SIZE (MB x 1024 x 1024)
    kmin_bytes: dict = field(default_factory=dict)  # KMIN_MAP: {rate_bps: bytes} (KB x 1000)
    kmax_bytes: dict = field(default_factory=dict)  # KMAX_MAP
    pmax: dict = field(default_factory=dict)  # PMAX_MAP
    enable_ecn: bool = True  # ENABLE_QCN
    pfc: bool = True  # PFC on; off means packets drop when the buffer is exhausted
    pfc_dynamic_threshold: bool = True  # USE_DYNAMIC_PFC_THRESHOLD (only the dynamic threshold is modelled)
    # NIC
    has_win: bool = False  # HAS_WIN
    var_win: bool = False  # VAR_WIN
    global_t: bool = True  # GLOBAL_T
    rate_bound: bool = True  # RATE_BOUND
    ack_high_prio: bool = True  # ACK_HIGH_PRIO (NIC side only, as in the reference)
    nack_interval_ps: int = 500_000_000  # reference: RdmaHw NACK timer, 500 us
    # go-back-N timeout, not in the reference (which stalls when a flow's last packets are dropped).
    # None: 4 ms when PFC is off (drops happen), none when PFC is on (as the reference); 0: never
    rto_ps: int | None = None
    # DCQCN (Mellanox variant)
    alpha_resume_interval_ps: int = 1_000_000  # ALPHA_RESUME_INTERVAL (us)
    rate_decrease_interval_ps: int = 4_000_000  # RATE_DECREASE_INTERVAL (us)
    rp_timer_ps: int = 300_000_000  # RP_TIMER (us)
    ewma_gain: float = 1 / 256  # EWMA_GAIN: g of DCQCN alpha and of DCTCP alpha
    fast_recovery_times: int = 1  # FAST_RECOVERY_TIMES
    clamp_target_rate: bool = False  # CLAMP_TARGET_RATE
    rate_on_first_cnp: float = 1.0  # reference RdmaHw RateOnFirstCnp default
    rate_ai_bps: int = 20_000_000  # RATE_AI
    rate_hai_bps: int = 200_000_000  # RATE_HAI
    min_rate_bps: int = 1_000_000_000  # MIN_RATE
    # DCTCP (rate-based)
    dctcp_rate_ai_bps: int = 615_000_000  # DCTCP_RATE_AI
    # HPCC (rate-based, per ACK, from INT)
    u_target: float = 0.95  # U_TARGET (eta)
    mi_thresh: int = 0  # MI_THRESH (maxStage; 0 in the reference's runs)
    int_multi: int = 1  # INT_MULTI: INT byte/qlen fields count units of 128 B / 80 B times this
    multi_rate: bool = False  # MULTI_RATE: one reference rate per hop instead of the max-utilisation hop
    sample_feedback: bool = False  # SAMPLE_FEEDBACK: fast reactions ignore hops with an empty queue
    fast_react: bool = True  # FAST_REACT: apply the tentative rate on every ACK, commit once per RTT
    # TIMELY (rdma-hw.cc attribute defaults; third.cc never sets them)
    timely_alpha: float = 0.875  # EWMA weight of the newest RTT difference
    timely_beta: float = 0.8  # multiplicative decrease factor
    timely_t_low_ps: int = 50_000_000  # 50 us
    timely_t_high_ps: int = 500_000_000  # 500 us
    timely_min_rtt_ps: int = 20_000_000  # 20 us: normalises the RTT gradient
    # run
    time_quantum_ps: int = 1000  # serialisation times truncated to 1 ns as the reference's clock; 1 for exact ps
    # SIMULATOR_STOP_TIME; None: until every flow completes (or nothing is left to happen)
    stop_time_ps: int | None = None
    seed: int = 1  # seeds the ECN marking draws (under rng "ns3": the reference's RngSeed, 1 by default)
    # random generator of the ECN draws: "xorshift" (xorshift64*, one uint64, the fastest) or "ns3" (the
    # reference's MRG32k3a with one new stream per draw, drawing where the reference draws: byte-identical
    # DCQCN runs; the default of `wormhole-lab ns3`). See engine/rng_ns3.py.
    rng: str = "xorshift"
    # the engine's tables (packet pool, event queue, flows, telemetry buffers) stop with a clear error
    # beyond this many bytes instead of swapping; None: half of this machine's memory
    memory_cap_bytes: int | None = None

    def __post_init__(self):
        if self.memory_cap_bytes is None:
            object.__setattr__(self, "memory_cap_bytes", _half_of_memory())
        self.validate()

    @property
    def effective_rto_ps(self) -> int:
        if self.rto_ps is None:
            return 0 if self.pfc else DEFAULT_RTO_PS
        return self.rto_ps

    @property
    def cc_mode(self) -> int:
        return CC_MODE_OF[self.cca]

    def with_(self, **changes) -> "EngineConfig":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def validate(self) -> None:
        """Reject impossible values, naming the field and the fix."""
        if self.cca not in CCA_NAMES:
            raise InputError(
                "EngineConfig.cca", f"unknown congestion control {self.cca!r}", f"choose one of {', '.join(CCA_NAMES)}"
            )
        if self.rng not in RNG_NAMES:
            raise InputError(
                "EngineConfig.rng",
                f"unknown random generator {self.rng!r}",
                f"choose one of {', '.join(RNG_NAMES)} (ns3: the reference's own draws)",
            )
        if self.rng == "ns3" and not check_seed(int(self.seed)):
            raise InputError(
                "EngineConfig.seed",
                f"the ns3 generator takes the reference's RngSeed, 1 to {M2 - 1}, got {self.seed!r}",
                "use 1 (the reference's default seed)",
            )
        positive = [
            "time_quantum_ps",
            "payload_bytes",
            "buffer_bytes",
            "nack_interval_ps",
            "alpha_resume_interval_ps",
            "rate_decrease_interval_ps",
            "rp_timer_ps",
            "min_rate_bps",
        ]
        for name in positive:
            if getattr(self, name) <= 0:
                raise InputError(
                    f"EngineConfig.{name}", f"must be positive, got {getattr(self, name)}", "use a value above 0"
                )
        if self.stop_time_ps is not None and not 0 < self.stop_time_ps <= MAX_STOP_TIME_PS:
            raise InputError(
                "EngineConfig.stop_time_ps",
                f"must be positive and at most {MAX_STOP_TIME_PS} ps, got {self.stop_time_ps}",
                "give a time in ps, or None to run until every flow completes",
            )
        for name in ["timely_t_low_ps", "timely_t_high_ps", "timely_min_rtt_ps", "int_multi"]:
            if getattr(self, name) <= 0:
                raise InputError(
                    f"EngineConfig.{name}", f"must be positive, got {getattr(self, name)}", "use a value above 0"
                )
        for name in ["u_target", "timely_alpha", "timely_beta"]:
            value = getattr(self, name)
            if not (0.0 < value <= 1.0):
                raise InputError(
                    f"EngineConfig.{name}",
                    f"must be in (0, 1], got {value}",
                    "the reference's default is in the field's comment",
                )
        if self.cca == "hpcc" and not self.has_win:
            raise InputError(
                "EngineConfig.has_win",
                "HPCC normalises queues by the window, so it needs one",
                "set has_win=True (HAS_WIN 1), as the reference's hp preset does",
            )
        if self.timely_t_low_ps >= self.timely_t_high_ps:
            raise InputError(
                "EngineConfig.timely_t_low_ps", "T_low must be below T_high", "the reference uses 50 us and 500 us"
            )
        for name in ["rate_ai_bps", "rate_hai_bps", "dctcp_rate_ai_bps", "fast_recovery_times", "mi_thresh"]:
            if getattr(self, name) < 0:
                raise InputError(
                    f"EngineConfig.{name}", f"must not be negative, got {getattr(self, name)}", "use 0 or more"
                )
        if self.memory_cap_bytes <= 0:
            raise InputError(
                "EngineConfig.memory_cap_bytes",
                f"must be positive, got {self.memory_cap_bytes}",
                "give a number of bytes, e.g. 8 * 2**30",
            )
        if self.rto_ps is not None and self.rto_ps < 0:
            raise InputError(
                "EngineConfig.rto_ps",
                f"must not be negative, got {self.rto_ps}",
                "use None (automatic), 0 (no timeout) or a time in ps",
            )
        if 8_000_000_000_000 % self.time_quantum_ps:
            raise InputError(
                "EngineConfig.time_quantum_ps",
                f"{self.time_quantum_ps} ps does not divide a bit time",
                "use 1000 (the reference's 1 ns), 100, 10 or 1",
            )
        if not (0.0 < self.ewma_gain <= 1.0) or math.isnan(self.ewma_gain):
            raise InputError(
                "EngineConfig.ewma_gain",
                f"must be in (0, 1], got {self.ewma_gain}",
                "the reference uses 1/256 for DCQCN, 1/16 for DCTCP",
            )
        if not (0.0 < self.rate_on_first_cnp <= 1.0):
            raise InputError(
                "EngineConfig.rate_on_first_cnp",
                f"must be in (0, 1], got {self.rate_on_first_cnp}",
                "the reference uses 1.0",
            )
        if self.payload_bytes > 65000:
            raise InputError(
                "EngineConfig.payload_bytes",
                f"{self.payload_bytes} B does not fit a packet",
                "use at most 9000 (jumbo frames)",
            )
        if set(self.kmin_bytes) != set(self.kmax_bytes) or set(self.kmin_bytes) != set(self.pmax):
            raise InputError(
                "EngineConfig.kmin_bytes/kmax_bytes/pmax",
                "the three ECN maps must name the same link speeds",
                "give KMIN_MAP, KMAX_MAP and PMAX_MAP one entry each for every link speed",
            )
        for rate, kmin in self.kmin_bytes.items():
            kmax, pmax = self.kmax_bytes[rate], self.pmax[rate]
            if kmin < 0 or kmax < kmin:
                raise InputError(
                    f"EngineConfig.kmin_bytes[{rate}]",
                    f"need 0 <= Kmin <= Kmax, got Kmin={kmin} Kmax={kmax}",
                    "raise Kmax or lower Kmin",
                )
            if not (0.0 <= pmax <= 1.0):
                raise InputError(
                    f"EngineConfig.pmax[{rate}]", f"must be a probability, got {pmax}", "use a value in [0, 1]"
                )

    def ecn_for_rate(self, rate_bps: int, where: str) -> tuple[int, int, float]:
        """(Kmin, Kmax, Pmax) for a link speed; a speed with no entry is an error, as in the reference."""
        if rate_bps not in self.kmin_bytes:
            known = ", ".join(str(r) for r in sorted(self.kmin_bytes)) or "none"
            raise InputError(
                where,
                f"no ECN threshold for link speed {rate_bps} bit/s (maps have: {known})",
                f"add an entry '{rate_bps} <value>' to KMIN_MAP, KMAX_MAP and PMAX_MAP",
            )
        return self.kmin_bytes[rate_bps], self.kmax_bytes[rate_bps], self.pmax[rate_bps]

    def manifest_json(self) -> str:
        """Every effective parameter as JSON (netCDF attributes must be strings or numbers)."""
        d = asdict(self)
        for key in ("kmin_bytes", "kmax_bytes", "pmax"):
            d[key] = {str(k): v for k, v in d[key].items()}
        d["cc_mode"] = self.cc_mode
        d["rto_ps"] = self.effective_rto_ps
        return json.dumps(d, sort_keys=True)
