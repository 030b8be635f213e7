"""Knobs of the steady-state test and the paper's DCTCP-derived guidance for choosing them.

The test itself runs inside the kernel (``engine.rate_window``): per flow, the last ``window`` samples of
the sending rate, taken every ``interval_ps``, must satisfy (max - min) / mean < ``theta``; a partition
is steady when all its flows are.
"""

import math
from dataclasses import dataclass

from wormhole_lab.engine.layout import CYCLE_MARKS
from wormhole_lab.errors import InputError


@dataclass(frozen=True)
class SteadyConfig:
    """theta: relative rate spread allowed; window: l samples; interval_ps: time between samples.

    ``None`` picks the default for the congestion control (``for_cca``): the window must span the
    CCA's control period (paper Eq. 13). HPCC, TIMELY and DCTCP adjust every RTT (a few us): 50 samples
    1 us apart (measured on a GPT-7B x0.5 iteration, HPCC, 64 GPUs: l = 50 gives 0.07 % mean FCT error at
    25x fewer events, l = 25 0.33 % at 38x, l = 20 0.77 % at 42x; with l = 25 memo hits drift past 1 % of
    the memo-off result, so accuracy keeps l = 50). DCQCN raises its rate only on its RP timer (300 us
    in the reference's presets), so its window spans two timer periods (60 samples 10 us apart):
    shorter windows mistake a flow parked at the minimum rate between two timer ticks for a steady one.
    ``min_skip_ps`` is the shortest skip worth taking. ``line_window`` (DCQCN only): a DCQCN flow whose last
    ``line_window`` samples sit at its line rate, with no CNP pending, is steady without the long window,
    since nothing but a CNP moves its rate; the default spans the other CCAs' 50 us (6 samples 10 us apart).
    ``cycles`` (DCQCN only): a flow below its line rate is steady when its last ``cycles`` rate cycles (cut to
    cut) agree in length and goodput within theta; it is skipped at their goodput (default 3).
    """

    theta: float = 0.05
    window: int | None = None
    interval_ps: int | None = None
    min_skip_ps: int = 20_000_000
    line_window: int | None = None
    cycles: int | None = None

    def for_cca(self, cfg) -> "SteadyConfig":
        """These settings with the defaults filled in for the engine configuration ``cfg``."""
        line_window = cycles = 0
        if cfg.cca == "dcqcn":
            interval = self.interval_ps or 10_000_000
            window = self.window or max(2, -(-2 * cfg.rp_timer_ps // interval))
            default = min(window, max(2, -(-50_000_000 // interval) + 1))
            line_window = default if self.line_window is None else self.line_window
            cycles = 3 if self.cycles is None else self.cycles
        else:
            interval = self.interval_ps or 1_000_000
            window = self.window or 50
        return SteadyConfig(self.theta, window, interval, self.min_skip_ps, line_window, cycles)

    def __post_init__(self):
        if not 0 < self.theta < 1:
            raise InputError("SteadyConfig.theta", f"must be in (0, 1), got {self.theta}", "the paper uses 0.05")
        if self.line_window is not None and (self.line_window < 0 or self.line_window == 1):
            raise InputError(
                "SteadyConfig.line_window", f"needs 0 (off) or at least 2 samples, got {self.line_window}", "use e.g. 6"
            )
        if self.cycles is not None and not 0 <= self.cycles < CYCLE_MARKS:
            raise InputError(
                "SteadyConfig.cycles", f"must be 0 (off) to {CYCLE_MARKS - 1}, got {self.cycles}", "use e.g. 2"
            )
        if self.window is not None and self.window < 2:
            raise InputError("SteadyConfig.window", f"needs at least 2 samples, got {self.window}", "use e.g. 50")
        if (self.interval_ps is not None and self.interval_ps <= 0) or self.min_skip_ps < 0:
            raise InputError(
                "SteadyConfig.interval_ps",
                "must be positive (and min_skip_ps not negative)",
                "use e.g. 1_000_000 (1 us)",
            )


def dctcp_theta_bound(n_flows: int, capacity_bps: float, rtt_s: float, packet_bytes: int = 1000) -> float:
    """Paper Eq. 11: theta should exceed sqrt(7 N / (16 C RTT)), with C RTT in packets."""
    bdp_packets = capacity_bps * rtt_s / (8 * packet_bytes)
    return math.sqrt(7 * n_flows / (16 * bdp_packets))


def dctcp_window_bound_s(n_flows: int, capacity_bps: float, rtt_s: float, packet_bytes: int = 1000) -> float:
    """Paper Eq. 13: the window must span at least one oscillation period, sqrt(4 C RTT / (7 N)) RTTs."""
    bdp_packets = capacity_bps * rtt_s / (8 * packet_bytes)
    return math.sqrt(4 * bdp_packets / (7 * n_flows)) * rtt_s
