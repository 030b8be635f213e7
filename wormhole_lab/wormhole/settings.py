"""The knobs of Wormhole mode, apart from the mode itself, so that a Scenario can carry them without loading it."""

from dataclasses import dataclass, field

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.wormhole.steady import SteadyConfig


@dataclass(frozen=True)
class WormholeConfig:
    """Knobs of the accelerated mode. ``memo``: path of the SQLite memo DB (None: no memoization). ``audit``:
    how many fast-forwards and how many memo hits to re-simulate packet by packet for an error estimate."""

    steady: SteadyConfig = field(default_factory=SteadyConfig)
    memo: str | None = None
    audit: int = 0

    def __post_init__(self):
        if isinstance(self.audit, bool) or not isinstance(self.audit, int | np.integer) or self.audit < 0:
            raise InputError(
                "WormholeConfig.audit",
                f"must be a whole number of windows to audit, 0 or more, got {self.audit!r}",
                "use e.g. 8 (0 turns the audit off)",
            )
