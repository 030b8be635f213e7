"""htsim connection-matrix files (``.cm``, csg-htsim ``sim/datacenter/connection_matrices``) into a FlowTable.

Format (one item per line; ``#`` starts a comment line; tokens are whitespace-separated)::

    Nodes 16                  header: number of hosts; every host id must be below it
    Connections 3             header: number of flow lines
    Triggers 1                optional header: number of trigger lines (required when there are any)
    Failures 0                optional header: must be 0, failures are not modelled
    0->1 start 0 size 1000000 id 1 send_done_trigger 1
    1->2 id 2 trigger 1 size 1000000
    2->3 start 5.5 size 4000 prio 1
    trigger id 1 oneshot

Flow lines are ``src->dst`` followed by keyword/value pairs in any order: ``start T``, ``size S``
(bytes, > 0), ``id i`` (> 0, unique), ``prio p``, ``trigger t``, ``send_done_trigger t``,
``recv_done_trigger t``. A flow has either ``start`` or ``trigger``, never both (as htsim insists).
Trigger lines are ``trigger id i`` plus exactly one of ``oneshot``, ``multishot``, ``barrier``, and
``count c`` (required for ``barrier``). All headers come before the first flow or trigger line.

Start-time unit. htsim changed it: older ``ConnectionMatrix::load`` read ``start`` in microseconds
(``timeFromUs``) and ``save`` still writes microseconds, while a later commit reads it "in picoseconds
already". The file does not say which, so the unit is an explicit argument, ``start_unit`` ("ps", "ns" or
"us", default "us"). Starts may be decimals; they are converted exactly and rounded to whole picoseconds.

Mapping onto the FlowTable's dependencies (a flow starts when *all* its dependencies completed):

* ``send_done_trigger t`` and ``recv_done_trigger t`` both become "when this flow completes". The engine
  only knows completion (the last ACK reaching the sender), so the finer htsim distinction between the
  sender finishing and the receiver finishing is lost; the difference is about one base RTT.
* A flow with ``trigger t`` waits for the flows that activate ``t`` (``start_ps`` = 0, so it starts as
  soon as the trigger fires).
* ``barrier count c``: fires after ``c`` activations, so exactly ``c`` activations must be declared (fewer:
  it never fires; more: htsim aborts on the extra ones). Its targets wait for all its activators.
* ``oneshot``: fires on its one activation (htsim aborts on a second one), so exactly one activation.
* ``multishot`` is APPROXIMATED as ``oneshot``: every target waits for the single activator. htsim itself
  starts its targets one per activation, in order, so this is exact only for a single target; with several
  targets a ``HtsimApproximationWarning`` says so (and ``meta["approximations"]`` records it). A multishot
  with several activators is rejected, as a oneshot would be.
* ``prio`` (htsim's host-queue priority, default 2000000) is not the reference's priority group: flows
  get ``pg`` 3 and ``dport`` 100 like the reference's flow files, and the prio values and htsim ids are
  kept in ``FlowTable.meta`` (``prio``, ``flow_ids``).

Flow rows follow file order. Node ids are htsim host ids: they match our topologies whose hosts are
numbered first (every builder in ``topology.builders`` does this). Where htsim silently ignores
something (unknown header words, repeated keywords), this reader stops with an InputError naming
``<path>:<line>`` and the fix; ``Failures`` and ``failure`` lines are rejected (no failure model).

``write_cm`` writes a FlowTable without dependencies back (``src->dst start T size S`` lines), such that
``read_cm`` with the same ``start_unit`` returns an equal table.
"""

import difflib
import re
import warnings
from dataclasses import replace
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path

import networkx as nx
import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.workload.flows import FlowTable, make_flows
from wormhole_lab.workload.validate import check_dependencies

__all__ = ["START_UNITS", "HtsimApproximationWarning", "read_cm", "write_cm"]

START_UNITS = {"ps": 1, "ns": 1_000, "us": 1_000_000}
"""Picoseconds per unit of the ``start`` field, for each allowed ``start_unit``."""

MAX_SIZE_BYTES = 2**53  # as for HPCC flow files: sizes stay exact in float64 downstream
DEFAULT_PG = 3  # priority group of every flow in the reference's flow files
DEFAULT_DPORT = 100  # destination port of every flow in the reference's flow files
HEADERS = ("Nodes", "Connections", "Triggers", "Failures")
FLOW_KEYWORDS = ("start", "size", "id", "prio", "trigger", "send_done_trigger", "recv_done_trigger")
TRIGGER_TYPES = ("oneshot", "multishot", "barrier")
TRIGGER_KEYWORDS = ("id", "count")

_FLOW_RE = re.compile(r"^\s*(\S+?)\s*->\s*(\S+)(.*)$")
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_FLOW_FIX = "write 'src->dst start T size S [id i] [prio p] [send_done_trigger t]' or 'src->dst trigger t size S'"
_TRIGGER_FIX = "write 'trigger id i oneshot', 'trigger id i multishot' or 'trigger id i barrier count c'"


class HtsimApproximationWarning(UserWarning):
    """A connection-matrix feature was mapped onto the engine only approximately (see ``htsim_cm``)."""


def read_cm(path, start_unit: str = "us") -> FlowTable:
    """Read an htsim connection matrix; ``start_unit`` ("ps", "ns", "us") is the unit of ``start`` values.

    Every malformed or unsupported line is an InputError located at ``<path>:<line>``.
    """
    path = Path(path)
    scale = _scale(start_unit, "read_cm(start_unit)")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(
            f"{path}:0", f"cannot read the connection matrix ({exc.strerror})", "check the path and permissions"
        ) from None
    return _Parser(path, scale, start_unit).parse(text.splitlines())


def write_cm(flows: FlowTable, path, start_unit: str = "us", nodes: int | None = None) -> None:
    """Write ``flows`` as a connection matrix; ``read_cm(path, start_unit)`` gives the same table back.

    ``nodes`` (the ``Nodes`` header) defaults to the highest host id + 1. Flows with dependencies,
    compute gaps, a tail, phase labels, or a pg/dport other than 3/100 are refused, since the file
    cannot hold them (dependencies need triggers, which this writer does not generate).
    """
    where = "write_cm(flows)"
    scale = _scale(start_unit, "write_cm(start_unit)")
    n = len(flows)
    if flows.has_dependencies or np.any(flows.gap_ps != 0) or flows.tail_ps:
        raise InputError(
            where,
            "the flows have dependencies or compute gaps, which write_cm cannot express",
            "write only flows without dependencies (keep the original .cm file for triggered traffic)",
        )
    checks = (
        (
            np.asarray(flows.pg) != DEFAULT_PG,
            "pg",
            f"a connection matrix has no priority group; read_cm uses {DEFAULT_PG}",
        ),
        (
            np.asarray(flows.dport) != DEFAULT_DPORT,
            "dport",
            f"a connection matrix has no port; read_cm uses {DEFAULT_DPORT}",
        ),
        (np.asarray(flows.phase) != "", "phase", "a connection matrix has no phase labels; clear them first"),
        (np.asarray(flows.size) <= 0, "size", "sizes must be positive"),
        (np.asarray(flows.start_ps) < 0, "start_ps", "start times must be 0 or later"),
        (np.asarray(flows.src) == np.asarray(flows.dst), "src", "a flow cannot go from a host to itself"),
        ((np.asarray(flows.src) < 0) | (np.asarray(flows.dst) < 0), "src", "node ids must not be negative"),
    )
    for mask, column, fix in checks:
        if n and mask.any():
            i = int(np.argmax(mask))
            value = np.asarray(getattr(flows, column))[i]
            raise InputError(f"FlowTable.{column}[{i}]", f"flow {i} has {column} {value!r}, which would be lost", fix)
    highest = int(max(flows.src.max(), flows.dst.max())) if n else -1
    if nodes is None:
        nodes = highest + 1
    elif isinstance(nodes, bool) or not isinstance(nodes, int | np.integer) or nodes <= highest:
        raise InputError(
            "write_cm(nodes)", f"nodes={nodes!r} does not cover host id {highest}", f"pass at least {highest + 1}"
        )
    unit = Decimal(scale)
    lines = [f"Nodes {int(nodes)}\n", f"Connections {n}\n"]
    for s, d, t, size in zip(
        flows.src.tolist(), flows.dst.tolist(), flows.start_ps.tolist(), flows.size.tolist(), strict=True
    ):
        lines.append(f"{s}->{d} start {_decimal_text(Decimal(t) / unit)} size {size}\n")
    Path(path).write_text("".join(lines), encoding="utf-8")


def _scale(start_unit, where: str) -> int:
    if start_unit not in START_UNITS:
        raise InputError(
            where,
            f"unknown start unit {start_unit!r}",
            f"use one of {', '.join(START_UNITS)}: 'us' for files from htsim's save() and older readers, "
            "'ps' for newer csg-htsim",
        )
    return START_UNITS[start_unit]


def _decimal_text(value: Decimal) -> str:
    """A Decimal as plain positional text without exponent or trailing zeros ('1.5', '0', '20')."""
    return format(value.normalize(), "f")


def _suggest(word: str, allowed) -> str:
    close = difflib.get_close_matches(word, list(allowed), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{hint}allowed: {', '.join(allowed)}"


class _Flow:
    __slots__ = ("line", "src", "dst", "start_ps", "size", "fid", "prio", "trigger", "done")

    def __init__(self, line: int):
        self.line = line
        self.start_ps = None
        self.size = None
        self.fid = 0
        self.prio = 2_000_000  # htsim's default priority
        self.trigger = 0
        self.done: list[int] = []  # trigger ids this flow activates when it completes (send/recv done)


class _Trigger:
    __slots__ = ("line", "tid", "kind", "count")

    def __init__(self, line: int):
        self.line = line
        self.tid = 0
        self.kind = ""
        self.count = None


class _Parser:
    def __init__(self, path: Path, scale: int, start_unit: str):
        self.path = path
        self.scale = scale
        self.start_unit = start_unit
        self.headers: dict[str, tuple[int, int]] = {}  # name -> (value, line)
        self.flows: list[_Flow] = []
        self.triggers: dict[int, _Trigger] = {}

    def where(self, line: int) -> str:
        return f"{self.path}:{line}"

    def parse(self, lines: list[str]) -> FlowTable:
        in_body = False
        for no, raw in enumerate(lines, start=1):
            toks = raw.split()
            if not toks or toks[0].startswith("#"):
                continue
            head = toks[0]
            if head in HEADERS:
                if in_body:
                    raise InputError(
                        self.where(no),
                        f"header {head!r} after the first flow or trigger line",
                        "move headers to the top",
                    )
                self._header(toks, no)
            elif head == "trigger":
                in_body = True
                self._trigger(toks, no)
            elif head == "failure":
                raise InputError(
                    self.where(no), "link and switch failures are not modelled", "remove the failure lines"
                )
            elif "->" in raw:
                in_body = True
                self._flow(raw, no)
            else:
                raise InputError(
                    self.where(no),
                    f"unknown line start {head!r}",
                    f"{_suggest(head, HEADERS + ('trigger',))}, or a flow line 'src->dst ...'",
                )
        return self._finish(len(lines))

    # --- lines -------------------------------------------------------------------------------------------

    def _header(self, toks: list[str], no: int) -> None:
        name = toks[0]
        if len(toks) != 2:
            raise InputError(self.where(no), f"header {name!r} needs exactly one number", f"write '{name} <count>'")
        if name in self.headers:
            raise InputError(
                self.where(no),
                f"header {name!r} given twice (first on line {self.headers[name][1]})",
                "keep one of them",
            )
        value = self._int(toks[1], no, name, minimum=1 if name == "Nodes" else 0)
        if name == "Failures" and value:
            raise InputError(
                self.where(no),
                f"{value} failures declared; link and switch failures are not modelled",
                "use 'Failures 0'",
            )
        self.headers[name] = (value, no)

    def _flow(self, raw: str, no: int) -> None:
        # "a->b", "a -> b" and "a ->b" all name the pair; the keyword/value pairs follow
        m = _FLOW_RE.match(raw)
        if not m:
            raise InputError(self.where(no), "cannot read the 'src->dst' pair", _FLOW_FIX)
        f = _Flow(no)
        n_nodes = self._nodes(no)
        f.src = self._host(m.group(1), no, "src", n_nodes)
        f.dst = self._host(m.group(2), no, "dst", n_nodes)
        if f.src == f.dst:
            raise InputError(self.where(no), f"flow from host {f.src} to itself", "give different src and dst hosts")
        toks = m.group(3).split()
        seen: set[str] = set()
        i = 0
        while i < len(toks):
            key = toks[i]
            if key not in FLOW_KEYWORDS:
                raise InputError(self.where(no), f"unknown flow keyword {key!r}", _suggest(key, FLOW_KEYWORDS))
            if key in seen:
                raise InputError(self.where(no), f"keyword {key!r} given twice", "give each keyword once")
            seen.add(key)
            if i + 1 >= len(toks):
                raise InputError(self.where(no), f"keyword {key!r} has no value", f"write '{key} <value>'")
            value = toks[i + 1]
            if key == "start":
                f.start_ps = self._start(value, no)
            elif key == "size":
                f.size = self._int(value, no, "size", minimum=1)
                if f.size > MAX_SIZE_BYTES:
                    raise InputError(self.where(no), f"size {f.size} B is too large", f"use at most {MAX_SIZE_BYTES}")
            elif key == "id":
                f.fid = self._int(value, no, "flow id", minimum=1)
            elif key == "prio":
                f.prio = self._int(value, no, "prio", minimum=None)
            elif key == "trigger":
                f.trigger = self._int(value, no, "trigger id", minimum=1)
            else:
                f.done.append(self._int(value, no, f"{key} id", minimum=1))
            i += 2
        if f.size is None:
            raise InputError(self.where(no), "flow has no size", "add 'size <bytes>'")
        if f.trigger and f.start_ps is not None:
            raise InputError(
                self.where(no),
                "flow has both a start time and a trigger (htsim rejects this too)",
                "drop 'start' to start on the trigger, or drop 'trigger'",
            )
        if not f.trigger and f.start_ps is None:
            raise InputError(
                self.where(no), "flow has neither a start time nor a trigger", "add 'start T' or 'trigger t'"
            )
        self.flows.append(f)

    def _trigger(self, toks: list[str], no: int) -> None:
        t = _Trigger(no)
        seen: set[str] = set()
        i = 1
        while i < len(toks):
            key = toks[i]
            if key in TRIGGER_TYPES:
                if t.kind:
                    raise InputError(
                        self.where(no),
                        f"trigger has two types, {t.kind!r} and {key!r}",
                        f"keep one of {', '.join(TRIGGER_TYPES)}",
                    )
                t.kind = key
                i += 1
                continue
            if key not in TRIGGER_KEYWORDS:
                raise InputError(
                    self.where(no), f"unknown trigger keyword {key!r}", _suggest(key, TRIGGER_KEYWORDS + TRIGGER_TYPES)
                )
            if key in seen:
                raise InputError(self.where(no), f"keyword {key!r} given twice", "give each keyword once")
            seen.add(key)
            if i + 1 >= len(toks):
                raise InputError(self.where(no), f"keyword {key!r} has no value", _TRIGGER_FIX)
            if key == "id":
                t.tid = self._int(toks[i + 1], no, "trigger id", minimum=1)
            else:
                t.count = self._int(toks[i + 1], no, "count", minimum=0)
            i += 2
        if not t.tid:
            raise InputError(self.where(no), "trigger has no id", _TRIGGER_FIX)
        if not t.kind:
            raise InputError(self.where(no), f"trigger {t.tid} has no type", _TRIGGER_FIX)
        if t.kind == "barrier" and not t.count:
            raise InputError(
                self.where(no), f"barrier trigger {t.tid} needs 'count c' with c >= 1", "add 'count <activations>'"
            )
        if t.tid in self.triggers:
            raise InputError(
                self.where(no),
                f"trigger {t.tid} defined twice (first on line {self.triggers[t.tid].line})",
                "give every trigger its own id",
            )
        self.triggers[t.tid] = t

    # --- whole file --------------------------------------------------------------------------------------

    def _finish(self, n_lines: int) -> FlowTable:
        for name in ("Nodes", "Connections"):
            if name not in self.headers:
                raise InputError(f"{self.path}:1", f"missing header '{name}'", f"start the file with '{name} <count>'")
        declared, line = self.headers["Connections"]
        if declared != len(self.flows):
            raise InputError(
                self.where(line),
                f"'Connections {declared}' but the file has {len(self.flows)} flow lines",
                "fix the count or restore the missing lines",
            )
        declared, line = self.headers.get("Triggers", (0, None))
        if declared != len(self.triggers):
            where = self.where(line) if line else f"{self.path}:1"
            raise InputError(
                where,
                f"{declared} triggers declared ('Triggers' header) but the file has {len(self.triggers)} trigger lines",
                f"write 'Triggers {len(self.triggers)}' in the header",
            )
        seen_ids: dict[int, int] = {}
        for f in self.flows:
            if f.fid:
                if f.fid in seen_ids:
                    raise InputError(
                        self.where(f.line),
                        f"flow id {f.fid} already used on line {seen_ids[f.fid]}",
                        "give each flow its own id",
                    )
                seen_ids[f.fid] = f.line
        deps, notes = self._resolve_triggers()
        self._check_cycles(deps)
        table = make_flows(
            [f.src for f in self.flows],
            [f.dst for f in self.flows],
            [f.size for f in self.flows],
            [f.start_ps or 0 for f in self.flows],
            pg=DEFAULT_PG,
            dport=DEFAULT_DPORT,
            deps=deps,
        )
        check_dependencies(table, where=str(self.path))
        meta = {
            "format": "htsim_cm",
            "source": str(self.path),
            "start_unit": self.start_unit,
            "nodes": self.headers["Nodes"][0],
            "flow_ids": [f.fid for f in self.flows],
            "prio": [f.prio for f in self.flows],
            "triggers": {t.tid: {"type": t.kind, "count": t.count, "line": t.line} for t in self.triggers.values()},
            "approximations": notes,
        }
        return replace(table, meta=meta)

    def _resolve_triggers(self) -> tuple[list[list[int]], list[str]]:
        activators: dict[int, list[int]] = {}
        targets: dict[int, list[int]] = {}
        for i, f in enumerate(self.flows):
            for tid in f.done:
                activators.setdefault(tid, []).append(i)
            if f.trigger:
                targets.setdefault(f.trigger, []).append(i)
            for tid in ([f.trigger] if f.trigger else []) + f.done:
                if tid not in self.triggers:
                    raise InputError(
                        self.where(f.line),
                        f"trigger {tid} is used here but never defined",
                        f"add a line 'trigger id {tid} oneshot' (or 'barrier count c')",
                    )
        deps: list[list[int]] = [[] for _ in self.flows]
        notes: list[str] = []
        for tid, t in sorted(self.triggers.items()):
            waiting = targets.get(tid, [])
            if not waiting:
                continue  # activations of a trigger nobody waits for change nothing
            acts = activators.get(tid, [])
            lines = ", ".join(str(self.flows[i].line) for i in acts)
            target_lines = ", ".join(str(self.flows[i].line) for i in waiting[:8]) + (
                ", ..." if len(waiting) > 8 else ""
            )
            if not acts:
                raise InputError(
                    self.where(t.line),
                    f"trigger {tid} starts the flows on lines {target_lines}, but no flow activates it, "
                    "so they would never start",
                    f"name it in a flow's send_done_trigger or recv_done_trigger ('send_done_trigger {tid}')",
                )
            if t.kind == "barrier" and len(acts) != t.count:
                problem = "it would never fire" if len(acts) < t.count else "htsim aborts on the extra activations"
                raise InputError(
                    self.where(t.line),
                    f"barrier trigger {tid} has count {t.count} but {len(acts)} activations (lines {lines}): {problem}",
                    f"write 'count {len(acts)}' or change which flows activate it",
                )
            if t.kind in ("oneshot", "multishot") and len(acts) != 1:
                read_as = " (multishot is read as oneshot)" if t.kind == "multishot" else ""
                raise InputError(
                    self.where(t.line),
                    f"{t.kind} trigger {tid} is activated {len(acts)} times (lines {lines}){read_as}; a oneshot fires "
                    "on its single activation and htsim aborts on a second",
                    f"use 'barrier count {len(acts)}' to wait for all of them, or let one flow activate it",
                )
            if t.kind == "multishot" and len(waiting) > 1:
                note = (
                    f"{self.where(t.line)}: multishot trigger {tid} approximated as oneshot: all {len(waiting)} "
                    "target flows start when its activator completes (htsim starts one target per activation)"
                )
                notes.append(note)
                warnings.warn(note, HtsimApproximationWarning, stacklevel=5)
            unique = sorted(set(acts))
            for i in waiting:
                deps[i] = sorted(set(deps[i]) | set(unique))
        return deps, notes

    def _check_cycles(self, deps: list[list[int]]) -> None:
        graph = nx.DiGraph()
        graph.add_edges_from((d, i) for i, ds in enumerate(deps) for d in ds)
        if graph.number_of_edges() and not nx.is_directed_acyclic_graph(graph):
            cycle = [u for u, _ in nx.find_cycle(graph)]
            first = cycle.index(min(cycle))
            cycle = cycle[first:] + cycle[:first]  # start at the earliest line, whatever order networkx found
            lines = " -> ".join(str(self.flows[i].line) for i in cycle)
            raise InputError(
                self.where(self.flows[cycle[0]].line),
                f"trigger cycle: the flows on lines {lines} -> {self.flows[cycle[0]].line} wait for each other "
                "and would never start",
                "break the cycle: one of these flows must start at a time instead of on a trigger",
            )

    # --- fields ------------------------------------------------------------------------------------------

    def _nodes(self, no: int) -> int:
        if "Nodes" not in self.headers:
            raise InputError(
                self.where(no), "flow line before the 'Nodes' header", "start the file with 'Nodes <hosts>'"
            )
        return self.headers["Nodes"][0]

    def _int(self, tok: str, no: int, what: str, minimum: int | None = 0) -> int:
        if not _INT_RE.match(tok):
            raise InputError(self.where(no), f"{what} {tok!r} is not an integer", "write a whole number")
        v = int(tok)
        if minimum is not None and v < minimum:
            raise InputError(self.where(no), f"{what} {v} must be at least {minimum}", f"write a number >= {minimum}")
        return v

    def _host(self, tok: str, no: int, what: str, n_nodes: int) -> int:
        v = self._int(tok, no, f"{what} host", minimum=0)
        if v >= n_nodes:
            raise InputError(
                self.where(no),
                f"{what} host {v} is out of range: 'Nodes {n_nodes}' allows ids 0..{n_nodes - 1}",
                "use a host id below Nodes, or raise Nodes",
            )
        return v

    def _start(self, tok: str, no: int) -> int:
        try:
            value = Decimal(tok)
        except InvalidOperation:
            value = None
        if value is None or not value.is_finite():
            raise InputError(
                self.where(no), f"start {tok!r} is not a number", f"write the start time in {self.start_unit}, e.g. 0"
            )
        if value < 0:
            raise InputError(self.where(no), f"start {tok} is negative", "start flows at 0 or later")
        ps = int((value * self.scale).to_integral_value(rounding=ROUND_HALF_EVEN))
        if ps > 2**62:
            raise InputError(self.where(no), f"start {tok} {self.start_unit} is too large", "use a smaller start time")
        return ps
