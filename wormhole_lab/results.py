"""Results of a run: the flow table (``RunResults``, an ``xarray.Dataset`` on demand), and files line-compatible
with the reference's fct.txt and pfc.txt.

The functions that read results (``fct_lines``, ``pfc_lines``, ``iteration_summary``) take a ``RunResults`` or a
Dataset alike: both give an array for ``data[name]`` and a dict as ``data.attrs``. A run that writes no Dataset
(``wormhole-lab ns3`` without ``--telemetry``) then never imports xarray, which takes a second to load.
"""

from typing import TYPE_CHECKING

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.errors import InputError
from wormhole_lab.telemetry import FLOW_ID_ATTRS
from wormhole_lab.topology.routing import host_ip

if TYPE_CHECKING:
    import xarray as xr

FLOW_VARIABLES = {
    "src": ("", "source host node id"),
    "dst": ("", "destination host node id"),
    "sport": ("", "UDP source port (10000 + k for the k-th flow of a host pair)"),
    "dport": ("", "UDP destination port"),
    "size": ("byte", "flow size"),
    "start": ("ps", "time the flow started (after its dependencies and compute gap); -1 if it never started"),
    "fct": ("ps", "flow completion time: start to the ACK of the last byte at the sender; -1 if unfinished"),
    "delivery_time": ("ps", "from the flow's start to its last byte's arrival at the receiver; -1 if it never arrived"),
    "standalone_fct": ("ps", "reference formula: base RTT + (size + packets x 48 B) x 8 / bottleneck rate"),
    "slowdown": ("1", "fct / standalone_fct (NaN if unfinished); can be slightly below 1, as in the reference"),
    "delivered": ("byte", "bytes the receiver got in order (equals size when the flow completed)"),
    "completed": ("1", "1 if the flow finished before the run stopped"),
    "completion_order": ("1", "order in which flows finished (the order of fct.txt lines); -1 if unfinished"),
    "retransmitted": ("byte", "bytes sent again after a NACK or a timeout"),
    "timeouts": ("1", "go-back-N timeouts"),
    "cnps": ("1", "ACKs that carried an ECN echo (CNP)"),
    "phase": ("", "what the flow is for in a training job (dp, pp, ep, tp), empty otherwise"),
    "unfinished_reason": ("", "why the flow did not complete (empty when it did)"),
}


class RunResults:
    """A finished run's variables as NumPy arrays: ``data[name]`` is an array, ``data[name] = (dims, values,
    attrs)`` adds one (as on a Dataset), ``attrs`` holds the run's statistics; ``dataset()`` is the xarray form."""

    def __init__(self, variables: dict, coords: dict, attrs: dict):
        self.variables = variables  # name -> (dims, values, attrs)
        self.coords = coords
        self.attrs = attrs

    def __getitem__(self, name: str) -> np.ndarray:
        return self.variables[name][1]

    def __setitem__(self, name: str, variable: tuple) -> None:
        dims, values, attrs = variable
        self.variables[name] = (dims if isinstance(dims, tuple) else (dims,), np.asarray(values), attrs)

    def __contains__(self, name: str) -> bool:
        return name in self.variables

    def assign_attrs(self, attrs: dict) -> "RunResults":
        self.attrs.update(attrs)
        return self

    def dataset(self) -> "xr.Dataset":
        import xarray as xr

        return xr.Dataset(self.variables, coords=self.coords, attrs=self.attrs)


def flow_results(state, flows, standalone_ps: np.ndarray, attrs: dict) -> RunResults:
    """One row per flow, every variable with ``units`` and ``long_name``."""
    fl = state.fl
    done = fl[:, L.FL_STATE] == L.FS_DONE
    fct = np.where(done, fl[:, L.FL_FINISH] - fl[:, L.FL_STARTED_AT], -1)
    slowdown = np.where(done, fct / standalone_ps, np.nan)
    delivered_at = fl[:, L.FL_DELIVERED_AT]
    values = {
        "src": flows.src,
        "dst": flows.dst,
        "sport": flows.sport,
        "dport": flows.dport,
        "size": flows.size,
        "start": fl[:, L.FL_STARTED_AT],
        "fct": fct,
        "delivery_time": np.where(delivered_at >= 0, delivered_at - fl[:, L.FL_STARTED_AT], -1),
        "standalone_fct": standalone_ps,
        "slowdown": slowdown,
        "delivered": fl[:, L.FL_RCV_NXT],
        "completed": done.astype(np.int8),
        "completion_order": fl[:, L.FL_DONE_ORDER],
        "retransmitted": fl[:, L.FL_RETX_BYTES],
        "timeouts": fl[:, L.FL_TIMEOUTS],
        "cnps": fl[:, L.FL_CNPS],
        "phase": flows.phase.astype(str),
        "unfinished_reason": unfinished_reasons(fl, attrs.get("stop_reason", "")),
    }
    data_vars = {
        name: (("flow",), np.asarray(values[name]), {"units": unit, "long_name": text})
        for name, (unit, text) in FLOW_VARIABLES.items()
    }
    log = state.pfc_log[: state.g[L.G_PFC_COUNT]]
    node = log[:, 1]
    pfc_vars = {
        "pfc_time": (("pfc_event",), log[:, 0], {"units": "ps", "long_name": "time the PFC frame was received"}),
        "pfc_node": (("pfc_event",), node, {"units": "", "long_name": "node that received the PFC frame"}),
        "pfc_node_is_switch": (
            ("pfc_event",),
            state.nd[node, L.ND_IS_SWITCH].astype(np.int8),
            {"units": "1", "long_name": "1 if the receiving node is a switch"},
        ),
        "pfc_ifindex": (("pfc_event",), log[:, 2], {"units": "", "long_name": "interface index (ns-3 numbering)"}),
        "pfc_pause": (("pfc_event",), log[:, 3].astype(np.int8), {"units": "1", "long_name": "1 pause, 0 resume"}),
    }
    coords = {"flow": ("flow", np.arange(len(flows)), FLOW_ID_ATTRS)}
    return RunResults(data_vars | pfc_vars, coords, dict(attrs))


def unfinished_reasons(fl: np.ndarray, stop: str) -> np.ndarray:
    """Per flow: empty when it completed, otherwise what held it up when the run stopped."""
    reasons = np.full(fl.shape[0], "", dtype=object)
    for f in np.flatnonzero(fl[:, L.FL_STATE] != L.FS_DONE):
        if fl[f, L.FL_STATE] == L.FS_ACTIVE:
            reasons[f] = (
                "stalled: no event left while it still had data"
                if stop == "idle"
                else "still sending when the run stopped"
            )
        elif fl[f, L.FL_DEPS_LEFT] > 0:
            reasons[f] = f"waiting for {int(fl[f, L.FL_DEPS_LEFT])} flows it depends on"
        else:
            reasons[f] = "its start time lies after the run stopped"
    return reasons.astype(str)


def fct_lines(data) -> list[str]:
    """Reference fct.txt lines (sip dip sport dport size start_ns fct_ns standalone_ns), in completion order."""
    col = {n: np.asarray(data[n]) for n in ("completed", "completion_order", "src", "dst", "sport", "dport")}
    col |= {n: np.asarray(data[n]) for n in ("size", "start", "fct", "standalone_fct")}
    done = np.flatnonzero(col["completed"] == 1)
    done = done[np.argsort(col["completion_order"][done], kind="stable")]
    rows = zip(*(col[n][done].tolist() for n in ("src", "dst", "sport", "dport", "size", "start", "fct")),
               col["standalone_fct"][done].tolist(), strict=True)  # fmt: skip
    return [
        f"{host_ip(src):08x} {host_ip(dst):08x} {sport} {dport} {size} {start // 1000} {fct // 1000} {alone // 1000}"
        for src, dst, sport, dport, size, start, fct, alone in rows
    ]


def pfc_lines(data) -> list[str]:
    """Reference pfc.txt lines: time_ns node node_type(0 host, 1 switch) ifindex type(1 pause, 0 resume)."""
    columns = [
        np.asarray(data[v]).tolist() for v in ("pfc_time", "pfc_node", "pfc_node_is_switch", "pfc_ifindex", "pfc_pause")
    ]
    return [f"{t // 1000} {n} {s} {i} {k}" for t, n, s, i, k in zip(*columns, strict=True)]


def check_writable(path, field: str) -> None:
    """Fail before the run, not after it, when an output file cannot be written."""
    from pathlib import Path

    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise InputError(field, f"output path {p} is a directory", "give a file name")
    if not parent.is_dir():
        raise InputError(field, f"folder {parent} of output {p} does not exist", "create the folder or change the path")
    try:
        with open(p, "a"):
            pass
    except OSError as exc:
        raise InputError(field, f"cannot write {p}: {exc.strerror}", "choose a writable location") from None


def write_lines(path, lines: list[str]) -> None:
    with open(path, "w") as out:
        out.writelines(line + "\n" for line in lines)


def busy_time_ps(starts: np.ndarray, ends: np.ndarray) -> int:
    """Length of the union of [start, end) intervals: how long at least one of the flows was on the wire."""
    if not len(starts):
        return 0
    order = np.argsort(starts, kind="stable")
    starts, reach = np.asarray(starts)[order], np.maximum.accumulate(np.asarray(ends)[order])
    # a stretch of overlapping intervals ends where the next starts after every end so far
    first = np.flatnonzero(np.r_[True, starts[1:] > reach[:-1]])
    last = np.r_[first[1:] - 1, len(starts) - 1]
    return int((reach[last] - starts[first]).sum())


def iteration_summary(data, tail_ps: int = 0) -> dict:
    """Iteration time (first start to last completion, plus trailing compute) and, per phase, the time its
    communication was in progress; all in ps. Only meaningful when every flow completed."""
    done = np.asarray(data["completed"]) == 1
    start = np.asarray(data["start"])[done]
    end = start + np.asarray(data["fct"])[done]
    summary = {"iteration_time_ps": int(end.max() - start.min() + tail_ps) if done.any() else -1}
    phases, size = np.asarray(data["phase"])[done], np.asarray(data["size"])[done]
    # the rows of each phase by one comparison per phase: a set of every flow's phase string took 0.85 ms of a
    # 0.13 s run (MoE-8x7B, warm memo DB)
    rows_of, rest = {}, np.flatnonzero(phases != "")
    while len(rest):
        phase = str(phases[rest[0]])
        mask = phases[rest] == phase
        rows_of[phase], rest = rest[mask], rest[~mask]
    for phase in sorted(rows_of):
        rows = rows_of[phase]
        summary[f"{phase}_comm_time_ps"] = busy_time_ps(start[rows], end[rows])
        summary[f"{phase}_bytes"] = int(size[rows].sum())
    return summary


def add_wormhole_results(ds: RunResults, controller) -> RunResults:
    """Wormhole mode's own statistics: attributes, per-flow time shares and the partition count over time."""
    ds = ds.assign_attrs(controller.attrs())
    ds.attrs["events_total_estimate"] = ds.attrs["events_executed"] + ds.attrs["events_skipped_estimate"]
    for name, (values, text) in controller.flow_variables(ds["fct"]).items():
        ds[name] = ("flow", values, {"units": "1" if "fraction" in name else "byte", "long_name": text})
    audit = controller.audit(ds["fct"])
    if audit is not None:
        ds = _add_audit(ds, *audit)
    log = controller.series()
    ds["partition_count"] = ("partition_change", log["counts"], {"units": "1", "long_name": "partitions alive"})
    ds["partition_change_time"] = (
        "partition_change",
        log["times"],
        {"units": "ps", "long_name": "time a flow started or finished"},
    )
    return ds


AUDIT_VARIABLES = {  # name: (units, long name, the AuditedWindow field)
    "audit_kind": ("", "what was audited: a fast-forward or a memo hit", "kind"),
    "audit_partition": ("", "partition id", "part"),
    "audit_start": ("ps", "start of the audited stretch (the skip's start)", "start_ps"),
    "audit_end": ("ps", "end of the audited stretch", "end_ps"),
    "audit_credited_bytes": ("byte", "bytes the skip credited its flows over the stretch", "credited_bytes"),
    "audit_simulated_bytes": (
        "byte",
        "bytes the same flows moved when the stretch was replayed packet by packet",
        "simulated_bytes",
    ),
    "audit_error": ("1", "sum over flows of |credited - simulated| / sum of simulated", "error"),
    "audit_signed_error": (
        "1",
        "(credited - simulated) / simulated: positive when the skip credited too much",
        "signed_error",
    ),
    "audit_max_flow_error": ("1", "largest |credited - simulated| / simulated of one flow", "max_flow_error"),
}


def _add_audit(ds: RunResults, attrs: dict, estimate: np.ndarray, windows: list) -> RunResults:
    """The self-audit: its attributes, the per-flow FCT error estimate, and one row per audited window."""
    ds = ds.assign_attrs(attrs)
    text = "estimated relative FCT error from the audited skips (method: the audit_method attribute)"
    ds["fct_error_estimate"] = ("flow", estimate, {"units": "1", "long_name": text})
    for name, (unit, text, column) in AUDIT_VARIABLES.items():
        values = np.array([getattr(w, column) for w in windows])
        ds[name] = ("audit", values.astype(str) if column == "kind" else values, {"units": unit, "long_name": text})
    return ds


def audit_summary(attrs: dict) -> str:
    """The self-audit's figures in one line: what was re-simulated, how far off the skips were, the estimate."""
    return (
        f"{attrs['audit_fastforwards']} fast-forwards and {attrs['audit_memo_hits']} memo hits re-simulated "
        f"({attrs['audit_seconds']:.2f} s); credited bytes off by {attrs['audit_fastforward_error']:.2%} "
        f"(fast-forwards), {attrs['audit_memo_error']:.2%} (memo hits); estimated FCT error mean "
        f"{attrs['audit_fct_error_estimate']:.2%}, max {attrs['audit_fct_error_estimate_max']:.2%}"
    )
