"""Reader and writer of HPCC's ``topology.txt`` (and SimAI's variant with NVSwitches).

HPCC layout::

    node_num switch_num link_num
    <switch ids>
    src dst rate delay error_rate        (link_num lines, e.g. "0 320 100Gbps 1000ns 0")

SimAI layout: line 1 is ``node_num gpus_per_server nvswitch_num switch_num link_num gpu_type`` and
line 2 lists the NVSwitch ids, then the switch ids. NVSwitches are switches here; the SimAI
fields are kept in ``meta`` (``gpus_per_server``, ``gpu_type``, ``nvswitch_ids``).

Blank lines inside the counted part are skipped (the reference reads with ``>>``); anything after
the last counted link line is ignored, since shipped files append a description there.
"""

from pathlib import Path

import numpy as np

from wormhole_lab.errors import InputError, read_text_file
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.validate import MAX_NODES, check_topology
from wormhole_lab.units import format_rate, format_time_ps, parse_rate, parse_time_ps

__all__ = ["read_topology", "write_topology"]

_HPCC_HEADER = "node_num switch_num link_num"
_SIMAI_HEADER = "node_num gpus_per_server nvswitch_num switch_num link_num gpu_type"


def read_topology(path) -> Topology:
    """Parse an HPCC or SimAI topology file into a validated Topology.

    Every error is an InputError located at ``"<path>:<line>"``.
    """
    path = Path(path)
    lines = read_text_file(path, "topology file", "give an HPCC or SimAI topology text file").splitlines()
    rows = ((i + 1, line.split()) for i, line in enumerate(lines))
    rows = ((no, toks) for no, toks in rows if toks)  # blank lines carry nothing, as with ifstream >>
    last = [0]  # line number of the last row consumed, for "file ends here" messages

    def next_row(what: str) -> tuple[int, list[str]]:
        for no, toks in rows:
            last[0] = no
            return no, toks
        raise InputError(
            f"{path}:{last[0] + 1}",
            f"file ends before {what} (truncated file)",
            "complete the file or fix the counts on line 1",
        )

    no, head = next_row("the header line")
    where = f"{path}:{no}"
    meta: dict = {"source": str(path)}
    if len(head) == 3:
        node_num, switch_num, link_num = (_int(t, where, f) for t, f in zip(head, _HPCC_HEADER.split(), strict=True))
        nvs_num = 0
        meta["format"] = "hpcc"
    elif len(head) == 6:
        names = _SIMAI_HEADER.split()[:5]
        node_num, gps, nvs_num, switch_num, link_num = (_int(t, where, f) for t, f in zip(head[:5], names, strict=True))
        if gps < 1:
            raise InputError(where, "gpus_per_server must be at least 1", "write the GPUs per server, e.g. 8")
        meta.update(format="simai", gpus_per_server=gps, gpu_type=head[5])
    else:
        raise InputError(
            where, f"header has {len(head)} fields", f"write '{_HPCC_HEADER}' (HPCC) or '{_SIMAI_HEADER}' (SimAI)"
        )
    if node_num < 1:
        raise InputError(where, "node_num must be at least 1", "count every host and switch")
    if node_num > MAX_NODES:
        raise InputError(where, f"node_num {node_num} is too large", f"use at most {MAX_NODES} nodes")
    if link_num > len(lines):  # checked before allocating one row per declared link
        raise InputError(
            where,
            f"link_num {link_num} is too large: the file has only {len(lines)} lines (truncated file?)",
            "fix the counts on line 1 or restore the missing link lines",
        )
    if nvs_num + switch_num > node_num:
        raise InputError(
            where,
            f"{nvs_num + switch_num} switches declared but only {node_num} nodes",
            "the switch count cannot exceed node_num",
        )

    is_switch = np.zeros(node_num, dtype=bool)
    switch_where = where
    n_ids = nvs_num + switch_num
    if n_ids:
        no, toks = next_row("the switch id line")
        switch_where = f"{path}:{no}"
        if len(toks) != n_ids:
            declared = f"{nvs_num} NVSwitch + {switch_num} switch" if nvs_num else f"{switch_num} switch"
            raise InputError(
                switch_where,
                f"switch count mismatch: {len(toks)} ids listed, line 1 declares {declared} ids",
                "list exactly the declared switch ids on this line",
            )
        ids = [_node(t, switch_where, node_num, "switch id") for t in toks]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InputError(switch_where, f"switch id {dup} listed twice", "list each switch once")
        is_switch[ids] = True
        if nvs_num:
            meta["nvswitch_ids"] = ids[:nvs_num]

    a = np.empty(link_num, dtype=np.int64)
    b = np.empty(link_num, dtype=np.int64)
    rate = np.empty(link_num, dtype=np.int64)
    delay = np.empty(link_num, dtype=np.int64)
    err = np.empty(link_num, dtype=np.float64)
    link_where = []
    for i in range(link_num):
        no, toks = next_row(f"link {i + 1} of {link_num}")
        lw = f"{path}:{no}"
        link_where.append(lw)
        if len(toks) != 5:
            raise InputError(
                lw,
                f"link line has {len(toks)} fields",
                "write 'src dst rate delay error_rate', e.g. '0 320 100Gbps 1000ns 0'",
            )
        a[i] = _node(toks[0], lw, node_num, "src")
        b[i] = _node(toks[1], lw, node_num, "dst")
        rate[i] = _rate(toks[2], lw)
        delay[i] = _delay(toks[3], lw)
        err[i] = _error_rate(toks[4], lw)

    topo = Topology(
        is_switch=is_switch,
        link_a=a,
        link_b=b,
        link_rate_bps=rate,
        link_delay_ps=delay,
        link_error_rate=err,
        name=path.name,
        meta=meta,
    )
    check_topology(topo, where=switch_where, link_where=link_where)
    return topo


def write_topology(topo: Topology, path, fmt: str = "auto") -> None:
    """Write ``topo`` in HPCC format (``fmt="hpcc"``) or SimAI format (``fmt="simai"``).

    ``"auto"`` picks SimAI when ``topo.meta`` has a ``gpu_type`` (i.e. it was read from a SimAI
    file). SimAI output needs ``meta["gpus_per_server"]``; ``nvswitch_ids`` defaults to none and
    ``gpu_type`` to ``"H100"``. Rates and delays are written so that read_topology gives back
    identical arrays.
    """
    check_topology(topo, where=f"write_topology({topo.name})")
    if fmt == "auto":
        fmt = "simai" if "gpu_type" in topo.meta else "hpcc"
    switches = [int(s) for s in topo.switches]
    if fmt == "hpcc":
        lines = [f"{topo.n_nodes} {len(switches)} {topo.n_links}", " ".join(map(str, switches))]
    elif fmt == "simai":
        if "gpus_per_server" not in topo.meta:
            raise InputError(
                f"write_topology({topo.name})",
                "SimAI format needs meta['gpus_per_server']",
                "set it in meta or write with fmt='hpcc'",
            )
        nvs = [int(s) for s in topo.meta.get("nvswitch_ids", [])]
        if any(not topo.is_switch[s] for s in nvs):
            raise InputError(
                f"write_topology({topo.name})",
                "meta['nvswitch_ids'] names a host",
                "list only switch nodes as NVSwitches",
            )
        nv_set = set(nvs)
        others = [s for s in switches if s not in nv_set]
        gpu_type = str(topo.meta.get("gpu_type", "H100"))
        lines = [
            f"{topo.n_nodes} {topo.meta['gpus_per_server']} {len(nvs)} {len(others)} {topo.n_links} {gpu_type}",
            " ".join(map(str, nvs + others)),
        ]
    else:
        raise InputError(f"write_topology(fmt={fmt!r})", "unknown format", "use 'auto', 'hpcc' or 'simai'")
    for l in range(topo.n_links):  # noqa: E741
        e = float(topo.link_error_rate[l])
        lines.append(
            f"{topo.link_a[l]} {topo.link_b[l]} {format_rate(int(topo.link_rate_bps[l]))} "
            f"{format_time_ps(int(topo.link_delay_ps[l]))} {'0' if e == 0 else repr(e)}"
        )
    Path(path).write_text("\n".join(lines) + "\n")


def _int(tok: str, where: str, what: str) -> int:
    try:
        v = int(tok)
    except ValueError:
        raise InputError(where, f"{what} must be an integer, got {tok!r}", "write a whole number") from None
    if v < 0:
        raise InputError(where, f"{what} must not be negative, got {v}", "write a whole number >= 0")
    return v


def _node(tok: str, where: str, node_num: int, what: str) -> int:
    v = _int(tok, where, what)
    if v >= node_num:
        raise InputError(
            where,
            f"{what} {v} is out of range: node ids run 0..{node_num - 1}",
            "use ids below node_num on line 1, or raise node_num",
        )
    return v


def _rate(tok: str, where: str) -> int:
    if tok.startswith("-"):
        raise InputError(where, f"rate {tok!r} is negative", "use a positive rate such as 100Gbps")
    return parse_rate(tok, where)


def _delay(tok: str, where: str) -> int:
    if tok.startswith("-"):
        raise InputError(where, f"delay {tok!r} is negative", "use a delay >= 0 such as 1000ns or 0.001ms")
    return parse_time_ps(tok, where)


def _error_rate(tok: str, where: str) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise InputError(
            where, f"cannot read error rate {tok!r}", "write a number between 0 and 1, usually 0"
        ) from None
    if not 0.0 <= v <= 1.0:
        raise InputError(where, f"error rate {tok} is outside [0, 1]", "write a number between 0 and 1, usually 0")
    return v
