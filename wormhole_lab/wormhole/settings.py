"""The knobs of Wormhole mode, apart from the mode itself, so that a Scenario can carry them without loading it."""

from dataclasses import dataclass, field, replace

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.wormhole.steady import SteadyConfig


@dataclass(frozen=True)
class WormholeConfig:
    """Knobs of the accelerated mode. ``memo``: path of the SQLite memo DB (None: no memoization). ``audit``:
    how many fast-forwards and how many memo hits to re-simulate packet by packet for an error estimate;
    ``audit_windows``: how many steady-test windows of an audited fast-forward to replay (0: all of it, which
    costs about what the skip saved; the default 2 costs GPT-7B x0.3 under 8 % of its run). ``tail_packets``: how
    many packets of the first flow to finish a skip or memo hit leaves to the packet level (its completion comes
    from there); the default 1 is as accurate as 4 against packet mode and executes half the events of a warm
    MoE-8x7B run (docs/wormhole-design.md, "The tail left to the packets")."""

    steady: SteadyConfig = field(default_factory=SteadyConfig)
    memo: str | None = None
    audit: int = 0
    audit_windows: int = 2
    tail_packets: int = 1

    def overridden(self, memo=None, audit: int | None = None) -> "WormholeConfig":
        """These settings with ``memo`` and ``audit`` replaced where given (a command line's --memo, --audit)."""
        changes = {"memo": None if memo is None else str(memo), "audit": audit}
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def __post_init__(self):
        for name, least, fix in (
            ("audit", 0, "use e.g. 8 (0 turns the audit off)"),
            ("audit_windows", 0, "use e.g. 2 (0: all)"),
            ("tail_packets", 1, "use e.g. 1 (the default)"),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
                problem = f"must be a whole number, {least} or more, got {value!r}"
                raise InputError(f"WormholeConfig.{name}", problem, fix)
