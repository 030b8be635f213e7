"""The knobs of Wormhole mode, apart from the mode itself, so that a Scenario can carry them without loading it."""

import os
from dataclasses import dataclass, field, replace

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.wormhole.steady import SteadyConfig


@dataclass(frozen=True)
class WormholeConfig:
    """Knobs of the accelerated mode. ``memo``: True (the default) memoizes within the run, in a temporary SQLite
    file deleted at its end; a path keeps the SQLite memo DB in that file across runs; False (or None) turns
    memoization off (docs/wormhole-design.md, "The memo DB from every entry point", says why the default keeps
    nothing). ``audit``:
    how many fast-forwards and how many memo hits to re-simulate packet by packet for an error estimate;
    ``audit_windows``: how many steady-test windows of an audited fast-forward to replay (0: all of it, which
    costs about what the skip saved; the default 2 costs GPT-7B x0.3 under 8 % of its run). ``tail_packets``: how
    many packets of the first flow to finish a skip or memo hit leaves to the packet level (its completion comes
    from there); the default 1 is as accurate as 4 against packet mode and executes half the events of a warm
    MoE-8x7B run (docs/wormhole-design.md, "The tail left to the packets")."""

    steady: SteadyConfig = field(default_factory=SteadyConfig)
    memo: str | bool = True
    audit: int = 0
    audit_windows: int = 2
    tail_packets: int = 1

    def overridden(self, memo=None, audit: int | None = None) -> "WormholeConfig":
        """These settings with ``memo`` and ``audit`` replaced where given (a command line's --memo FILE or
        --no-memo, --audit); None leaves a setting as it is."""
        changes = {"memo": memo, "audit": audit}
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def memo_kind(self) -> str:
        """"run" (within the run only), "file" (kept in ``memo``) or "off"."""
        if self.memo is True:
            return "run"
        return "file" if self.memo else "off"

    def __post_init__(self):
        if self.memo is None or isinstance(self.memo, os.PathLike):  # None: off, as before memoizing by default
            object.__setattr__(self, "memo", False if self.memo is None else os.fspath(self.memo))
        if not isinstance(self.memo, bool | str) or self.memo == "":
            raise InputError(
                "WormholeConfig.memo",
                f"must be True (memoize within the run), False (off) or a file path, got {self.memo!r}",
                "leave it out for the default (True), or give memo=False to turn memoization off",
            )
        for name, least, fix in (
            ("audit", 0, "use e.g. 8 (0 turns the audit off)"),
            ("audit_windows", 0, "use e.g. 2 (0: all)"),
            ("tail_packets", 1, "use e.g. 1 (the default)"),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
                problem = f"must be a whole number, {least} or more, got {value!r}"
                raise InputError(f"WormholeConfig.{name}", problem, fix)
