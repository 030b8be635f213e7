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
    costs about what the skip saved; the default 2 costs GPT-7B x0.3 under 8 % of its run)."""

    steady: SteadyConfig = field(default_factory=SteadyConfig)
    memo: str | None = None
    audit: int = 0
    audit_windows: int = 2

    def overridden(self, memo=None, audit: int | None = None) -> "WormholeConfig":
        """These settings with ``memo`` and ``audit`` replaced where given (a command line's --memo, --audit)."""
        changes = {"memo": None if memo is None else str(memo), "audit": audit}
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def __post_init__(self):
        for name, fix in (("audit", "use e.g. 8 (0 turns the audit off)"), ("audit_windows", "use e.g. 2 (0: all)")):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                raise InputError(f"WormholeConfig.{name}", f"must be a whole number, 0 or more, got {value!r}", fix)
