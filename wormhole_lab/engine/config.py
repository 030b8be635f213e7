"""Every knob of the packet engine, in one validated record.

Names follow the reference's ``config.txt`` keys (lower-cased), converted to engine units:
rates in bit/s, times in picoseconds, sizes in bytes. Presets live in ``presets.py``.
"""

import json
import math
from dataclasses import asdict, dataclass, field, replace

from wormhole_lab.errors import InputError

CCA_NAMES = ("dcqcn", "dctcp")
"""Congestion-control algorithms the engine runs; CC_MODE 1 and 8 of the reference."""

CC_MODE_OF = {"dcqcn": 1, "dctcp": 8}

DEFAULT_RTO_PS = 4_000_000_000  # 4 ms: far above any RTT in a data centre, short enough to recover in a test


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
    # run
    time_quantum_ps: int = 1000  # serialisation times rounded to 1 ns as the reference's clock; 1 for exact ps
    stop_time_ps: int = 4 * 10**12  # SIMULATOR_STOP_TIME
    seed: int = 1  # seeds the ECN marking draws

    def __post_init__(self):
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
        positive = [
            "time_quantum_ps",
            "payload_bytes",
            "buffer_bytes",
            "nack_interval_ps",
            "alpha_resume_interval_ps",
            "rate_decrease_interval_ps",
            "rp_timer_ps",
            "min_rate_bps",
            "stop_time_ps",
        ]
        for name in positive:
            if getattr(self, name) <= 0:
                raise InputError(
                    f"EngineConfig.{name}", f"must be positive, got {getattr(self, name)}", "use a value above 0"
                )
        for name in ["rate_ai_bps", "rate_hai_bps", "dctcp_rate_ai_bps", "fast_recovery_times"]:
            if getattr(self, name) < 0:
                raise InputError(
                    f"EngineConfig.{name}", f"must not be negative, got {getattr(self, name)}", "use 0 or more"
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
