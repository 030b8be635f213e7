"""Where each rank of a TP/DP/PP/EP training job runs: rank ``r`` is GPU (host) ``r``.

Megatron order, TP innermost: ``tp = r % TP``, ``dp = (r // TP) % DP``, ``pp = r // (TP*DP)``. On a
``rail_optimized`` cluster GPU ``g`` of server ``s`` is host ``s*gpus_per_server + g`` on rail ``g``,
so a TP group fills (part of) one server and, when ``TP == gpus_per_server``, DP and PP peers sit
on the same rail.

Expert parallelism follows Megatron-MoE and SimAI: EP groups are blocks of ``EP`` *consecutive DP
ranks* with the same TP and PP coordinates (DP ranks ``b*EP .. b*EP+EP-1``), so EP must divide DP.
The expert-data-parallel groups (SimAI's ``DP_EP``, which sync expert gradients) take the same
position ``e`` from every EP block: DP ranks ``e, e+EP, e+2*EP, ...``.
"""

import operator
from dataclasses import dataclass

from wormhole_lab.errors import InputError

__all__ = ["Placement"]


def _positive(where: str, name: str, value) -> int:
    if isinstance(value, bool):
        raise InputError(f"{where}.{name}", f"{name}={value!r} is not an integer", "pass a whole number >= 1")
    try:
        v = operator.index(value)
    except TypeError:
        raise InputError(f"{where}.{name}", f"{name}={value!r} is not an integer", "pass a whole number >= 1") from None
    if v < 1:
        raise InputError(f"{where}.{name}", f"{name}={v} must be at least 1", "pass a whole number >= 1")
    return v


@dataclass(frozen=True)
class Placement:
    """A parallelism plan on ``n_gpus`` GPUs. ``dp=None`` means ``n_gpus // (tp*pp)``.

    Raises InputError when ``tp*dp*pp != n_gpus``, when a TP group would span servers (``tp`` must
    divide ``gpus_per_server``), when ``ep`` does not divide ``dp``, or when ``n_gpus`` is not a whole
    number of servers.
    """

    n_gpus: int
    gpus_per_server: int = 8
    tp: int = 1
    pp: int = 1
    dp: int | None = None
    ep: int = 1

    def __post_init__(self):
        w = "Placement"
        n = _positive(w, "n_gpus", self.n_gpus)
        gps = _positive(w, "gpus_per_server", self.gpus_per_server)
        tp, pp, ep = (_positive(w, k, getattr(self, k)) for k in ("tp", "pp", "ep"))
        if self.dp is None:
            if n % (tp * pp):
                raise InputError(
                    f"{w}.dp",
                    f"{n} GPUs cannot be split into TP{tp} x PP{pp} groups ({n} is not a multiple of {tp * pp})",
                    "choose tp and pp whose product divides n_gpus, or pass dp",
                )
            dp = n // (tp * pp)
        else:
            dp = _positive(w, "dp", self.dp)
        for k, v in (("n_gpus", n), ("gpus_per_server", gps), ("tp", tp), ("pp", pp), ("dp", dp), ("ep", ep)):
            object.__setattr__(self, k, v)
        plan = f"{w}(TP{tp} x DP{dp} x PP{pp} on {n} GPUs)"
        if tp * dp * pp != n:
            raise InputError(
                plan,
                f"TP*DP*PP = {tp * dp * pp} but the job has {n} GPUs",
                f"make tp*dp*pp equal n_gpus, e.g. dp={n // (tp * pp)}"
                if n % (tp * pp) == 0
                else "make tp*dp*pp equal n_gpus",
            )
        if n % gps:
            raise InputError(
                f"{w}.n_gpus",
                f"{n} GPUs is not a whole number of {gps}-GPU servers",
                "use a multiple of gpus_per_server",
            )
        if gps % tp:
            raise InputError(
                f"{w}.tp",
                f"a TP group of {tp} GPUs would span servers of {gps} GPUs",
                f"use a tp that divides gpus_per_server ({gps})",
            )
        if dp % ep:
            raise InputError(
                f"{w}.ep",
                f"EP{ep} does not divide DP{dp}: EP groups are blocks of consecutive DP ranks",
                f"use an ep that divides {dp} (e.g. {_largest_divisor(dp, ep)})",
            )

    # --- coordinates -------------------------------------------------------------------------
    def rank(self, tp: int, dp: int, pp: int) -> int:
        """GPU (host id) of the rank with these coordinates."""
        return tp + self.tp * (dp + self.dp * pp)

    def coords(self, rank: int) -> tuple[int, int, int]:
        """``(tp, dp, pp)`` of a rank."""
        return rank % self.tp, (rank // self.tp) % self.dp, rank // (self.tp * self.dp)

    def server(self, rank: int) -> int:
        return rank // self.gpus_per_server

    def rail(self, rank: int) -> int:
        """Rail switch index (GPU position inside its server)."""
        return rank % self.gpus_per_server

    def stage_ranks(self, pp: int) -> list[int]:
        """All ranks of pipeline stage ``pp``, in rank order."""
        base = pp * self.tp * self.dp
        return list(range(base, base + self.tp * self.dp))

    # --- groups ------------------------------------------------------------------------------
    def tp_groups(self) -> list[list[int]]:
        """One group per (dp, pp), ordered by stage then DP rank; members by TP rank."""
        return [[self.rank(t, d, p) for t in range(self.tp)] for p in range(self.pp) for d in range(self.dp)]

    def dp_groups(self) -> list[list[int]]:
        """One group per (tp, pp); members by DP rank (the ring order)."""
        return [[self.rank(t, d, p) for d in range(self.dp)] for p in range(self.pp) for t in range(self.tp)]

    def pp_groups(self) -> list[list[int]]:
        """One pipeline per (tp, dp); members ordered by stage 0..PP-1."""
        return [[self.rank(t, d, p) for p in range(self.pp)] for d in range(self.dp) for t in range(self.tp)]

    def ep_groups(self) -> list[list[int]]:
        """Blocks of EP consecutive DP ranks with equal TP and PP coordinates."""
        return [
            [self.rank(t, b * self.ep + e, p) for e in range(self.ep)]
            for p in range(self.pp)
            for t in range(self.tp)
            for b in range(self.dp // self.ep)
        ]

    def edp_groups(self) -> list[list[int]]:
        """Expert-data-parallel groups (SimAI's ``DP_EP``): DP ranks ``e, e+EP, ...``; size DP/EP."""
        return [
            [self.rank(t, b * self.ep + e, p) for b in range(self.dp // self.ep)]
            for p in range(self.pp)
            for t in range(self.tp)
            for e in range(self.ep)
        ]

    def groups(self, kind: str) -> list[list[int]]:
        """Groups by name: ``"tp"``, ``"dp"``, ``"pp"``, ``"ep"`` or ``"edp"``."""
        table = {
            "tp": self.tp_groups,
            "dp": self.dp_groups,
            "pp": self.pp_groups,
            "ep": self.ep_groups,
            "edp": self.edp_groups,
        }
        if kind not in table:
            raise InputError(f"Placement.groups({kind!r})", "unknown group kind", f"use one of {sorted(table)}")
        return table[kind]()

    def __str__(self) -> str:
        ep = f"-EP{self.ep}" if self.ep > 1 else ""
        return f"TP{self.tp}{ep}-DP{self.dp}-PP{self.pp} on {self.n_gpus} GPUs"


def _largest_divisor(n: int, at_most: int) -> int:
    return max(d for d in range(1, min(n, at_most) + 1) if n % d == 0)
