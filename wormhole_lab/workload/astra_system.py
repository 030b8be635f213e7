"""ASTRA-sim's system configuration (the JSON of ``--system-configuration``): how collectives are run.

Keys and meanings follow ASTRA-sim 2.0 (``astra-sim/system/Sys.cc`` ``initialize_sys`` and
``astraccl/CollectiveImplLookup.cc``, read at commit 518bd513):

- ``scheduling-policy`` (LIFO, FIFO, EXPLICIT), ``collective-optimization`` (baseline, localBWAware);
- ``endpoint-delay``: ns added once per received message and once at each chunk's start (default 10);
- ``active-chunks-per-dimension``: chunks of one collective in flight at once per dimension (default 1);
- ``preferred-dataset-splits``: chunks per collective (no default: ASTRA-sim divides by zero without it);
- ``local-mem-bw``: GB/s (10^9 B/s) of the memory a reduction reads and writes, 3 passes per reduced message;
- ``{all-reduce,all-gather,reduce-scatter,all-to-all}-implementation``: one algorithm per network dimension
  (``ring``, ``direct``, ``directN`` (a window of N), ``halvingDoubling``, ``doubleBinaryTree``), or one of
  ``oneRing``, ``oneDirect``, ``oneHalvingDoubling`` for a single flat collective over all NPUs;
- ``{...}-implementation-custom``: a Chakra trace prefix of a hand-written collective (sends, receives, compute).

Keys ASTRA-sim reads but that change nothing here (``boost-mode``, ``peak-perf``, ``trace-enabled``,
``track-local-mem``, ``local-mem-trace-filename``, the LogGP ``L``/``o``/``g``/``G``/``local-reduction-delay``
without ``model-shared-bus``) are accepted; ``roofline-enabled: 1``, ``model-shared-bus: 1`` and ``replay-only: 1``
change timing in ways not modelled and are refused; any other key is refused as a likely typo. Where ASTRA-sim
leaves a value uninitialised (no ``scheduling-policy`` or ``collective-optimization``), the value used here is
listed in ``AstraSystem.assumed`` so that a run can say so.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from wormhole_lab.errors import InputError, read_json_file

__all__ = ["ALGORITHMS", "COLLECTIVE_KEYS", "AstraSystem", "read_astra_system", "read_comm_groups"]

COLLECTIVE_KEYS = {  # collective -> its key's stem in the JSON
    "all_reduce": "all-reduce",
    "all_gather": "all-gather",
    "reduce_scatter": "reduce-scatter",
    "all_to_all": "all-to-all",
}
ALGORITHMS = ("ring", "direct", "halvingDoubling", "doubleBinaryTree")
FLAT = {"oneRing": "ring", "oneDirect": "direct", "oneHalvingDoubling": "halvingDoubling"}
IGNORED_KEYS = (
    "boost-mode", "peak-perf", "trace-enabled", "track-local-mem", "local-mem-trace-filename", "L", "o", "g", "G",
    "local-reduction-delay",
)  # fmt: skip
REFUSED_IF_SET = {
    "roofline-enabled": "compute times from num_ops and tensor_size (roofline) are not modelled",
    "model-shared-bus": "the LogGP shared-bus model is not modelled",
    "replay-only": "replaying every node by its duration is not modelled",
}
KNOWN_KEYS = (
    "scheduling-policy", "collective-optimization", "endpoint-delay", "active-chunks-per-dimension",
    "preferred-dataset-splits", "local-mem-bw", *IGNORED_KEYS, *REFUSED_IF_SET,
    *(f"{stem}-implementation" for stem in COLLECTIVE_KEYS.values()),
    *(f"{stem}-implementation-custom" for stem in COLLECTIVE_KEYS.values()),
)  # fmt: skip


@dataclass(frozen=True)
class AstraSystem:
    """What the system JSON says, checked. ``implementations[collective]`` is one ``(algorithm, window)`` per
    dimension (window: the N of ``directN``, else 0); ``flat[collective]`` marks ``one*`` algorithms;
    ``custom[collective]`` is a custom collective's trace prefix."""

    scheduling_policy: str = "FIFO"
    collective_optimization: str = "localBWAware"
    endpoint_delay_ns: int = 10
    active_chunks: int = 1
    splits: int = 1
    local_mem_bw_GBps: float | None = None
    implementations: dict = field(default_factory=dict)
    flat: dict = field(default_factory=dict)
    custom: dict = field(default_factory=dict)
    assumed: tuple[str, ...] = ()
    path: Path | None = None

    def where(self, key: str) -> str:
        """``file:line`` of ``key`` (or the file) for errors found later, when a collective needs it."""
        return _where(self.path, key)

    def reduction_ns(self, nbytes: int) -> int:
        """ASTRA-sim's reduction time of a received message: 3 passes over local memory (write, read, read), each
        truncated to whole ns (``PacketBundle::call``)."""
        if self.local_mem_bw_GBps is None:
            raise InputError(
                self.where("local-mem-bw"), "a reducing collective runs but local-mem-bw is not given (ASTRA-sim "
                "then divides by zero)", "add e.g. \"local-mem-bw\": 1600 (GB/s)",
            )  # fmt: skip
        return 3 * int(nbytes / (self.local_mem_bw_GBps * 1e9) * 1e9)

    def algorithm(self, collective: str, dim: int) -> tuple[str, int]:
        """The ``(algorithm, window)`` of ``collective`` in dimension ``dim``."""
        algos = self.implementations.get(collective)
        key = f"{COLLECTIVE_KEYS[collective]}-implementation"
        if not algos:
            raise InputError(self.where(key), f"the trace has a {collective} but {key} is not given",
                             f"add e.g. \"{key}\": [\"ring\"]")  # fmt: skip
        if dim >= len(algos):
            raise InputError(
                self.where(key), f"{key} names {len(algos)} algorithm(s) but the network has a dimension {dim}",
                "give one algorithm per network dimension",
            )  # fmt: skip
        return algos[dim]


def _where(path: Path | None, key: str) -> str:
    if path is None:
        return f"system configuration {key}"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return f"{path}: {key}"
    pattern = re.compile(rf'"{re.escape(key)}"\s*:')
    line = next((i for i, text in enumerate(lines, 1) if pattern.search(text)), 0)
    return f"{path}:{line} {key}" if line else f"{path}: {key}"


def _number(value, where: str, what: str, minimum: float, integer: bool):
    if isinstance(value, bool) or not isinstance(value, int | float) or (integer and value != int(value)):
        raise InputError(where, f"must be {what}, got {value!r}", f"give {what}")
    if value < minimum:
        raise InputError(where, f"must be at least {minimum}, got {value!r}", f"give {what} >= {minimum}")
    return int(value) if integer else float(value)


def _algorithms(value, where: str) -> tuple[tuple[tuple[str, int], ...], bool]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise InputError(where, f"must be a list of algorithm names, got {value!r}", 'e.g. ["ring"]')
    allowed = f"one per dimension of {', '.join(ALGORITHMS)}, directN (a window of N), or one of {', '.join(FLAT)}"
    if any(v in FLAT for v in value):
        if len(value) != 1:
            raise InputError(where, f"{value!r} mixes a flat one* algorithm with others", "give it alone")
        return ((FLAT[value[0]], 0),), True
    out = []
    for name in value:
        window = re.fullmatch(r"direct(\d+)", name)
        if window and int(window.group(1)) > 0:
            out.append(("direct", int(window.group(1))))
        elif name in ALGORITHMS:
            out.append((name, 0))
        else:
            raise InputError(where, f"unknown algorithm {name!r}", allowed)
    return tuple(out), False


def read_astra_system(path: str | Path) -> AstraSystem:
    """Read and check an ASTRA-sim system configuration; every error names ``file:line``, the key and the fix."""
    path = Path(path)
    raw = read_json_file(path, "ASTRA-sim system configuration", "a JSON object such as configs/Ring_4chunks.json")
    if not isinstance(raw, dict):
        raise InputError(f"{path}:1", "must be a JSON object of settings", '{"preferred-dataset-splits": 4, ...}')

    def at(key):
        return _where(path, key)

    for key in raw:
        if key not in KNOWN_KEYS:
            plain = key.replace("_", "").replace("-", "").lower()
            close = [k for k in KNOWN_KEYS if k.replace("-", "").lower() == plain]
            fix = f"did you mean {close[0]!r}?" if close else "remove it, or use one of the keys ASTRA-sim reads"
            raise InputError(at(key), f"unknown key {key!r}", fix)
    for key, why in REFUSED_IF_SET.items():
        if raw.get(key, 0) not in (0, False):
            raise InputError(at(key), f"{key} is set: {why}", "remove it or set it to 0")
    assumed = []
    policy = raw.get("scheduling-policy")
    if policy is None:
        policy = "FIFO"
        assumed.append("scheduling-policy FIFO (ASTRA-sim leaves it uninitialised)")
    elif policy not in ("LIFO", "FIFO", "EXPLICIT"):
        raise InputError(at("scheduling-policy"), f"unknown policy {policy!r}", "LIFO, FIFO or EXPLICIT")
    optimization = raw.get("collective-optimization")
    if optimization is None:
        optimization = "localBWAware"
        assumed.append("collective-optimization localBWAware (ASTRA-sim leaves it uninitialised)")
    elif optimization not in ("baseline", "localBWAware"):
        raise InputError(at("collective-optimization"), f"unknown value {optimization!r}", "baseline or localBWAware")
    if "preferred-dataset-splits" not in raw:
        raise InputError(
            f"{path}:1", "preferred-dataset-splits is not given (ASTRA-sim divides by it)",
            'add "preferred-dataset-splits": 1 (or the number of chunks per collective)',
        )  # fmt: skip
    local_mem_bw = raw.get("local-mem-bw")
    if local_mem_bw is not None:
        local_mem_bw = _number(local_mem_bw, at("local-mem-bw"), "GB/s", 0, False)
        if local_mem_bw == 0:
            raise InputError(at("local-mem-bw"), "must be above 0 GB/s", 'e.g. "local-mem-bw": 1600')
    implementations, flat, custom = {}, {}, {}
    for collective, stem in COLLECTIVE_KEYS.items():
        if f"{stem}-implementation" in raw:
            key = f"{stem}-implementation"
            implementations[collective], flat[collective] = _algorithms(raw[key], at(key))
        if f"{stem}-implementation-custom" in raw:
            key = f"{stem}-implementation-custom"
            value = raw[key]
            if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], str) or not value[0]:
                raise InputError(at(key), f"must be a list of one trace prefix, got {value!r}",
                                 '["custom_collectives/custom_ring_allreduce_8npus_1MB/custom_allreduce"]')  # fmt: skip
            custom[collective] = value[0]
    return AstraSystem(
        scheduling_policy=policy,
        collective_optimization=optimization,
        endpoint_delay_ns=_number(raw.get("endpoint-delay", 10), at("endpoint-delay"), "an integer of ns", 0, True),
        active_chunks=_number(
            raw.get("active-chunks-per-dimension", 1), at("active-chunks-per-dimension"), "an integer", 1, True
        ),  # fmt: skip
        splits=_number(raw["preferred-dataset-splits"], at("preferred-dataset-splits"), "an integer", 1, True),
        local_mem_bw_GBps=local_mem_bw,
        implementations=implementations,
        flat=flat,
        custom=custom,
        assumed=tuple(assumed),
        path=path,
    )


def read_comm_groups(path) -> dict[str, list[int]]:
    """ASTRA-sim's ``--comm-group-configuration``: ``{"group id": [ranks, ...]}``."""
    path = Path(path)
    raw = read_json_file(path, "comm-group configuration", '{"1": [0, 1, 2, 3]}')
    if not isinstance(raw, dict):
        raise InputError(f"{path}:1", "must be a JSON object of group id -> ranks", '{"1": [0, 1, 2, 3]}')
    for group, ranks in raw.items():
        if not isinstance(ranks, list) or not ranks or not all(isinstance(r, int) and r >= 0 for r in ranks):
            raise InputError(f"{path}: group {group}", f"must be a list of rank numbers, got {ranks!r}", "[0, 1, 2, 3]")
    return {str(k): list(v) for k, v in raw.items()}
