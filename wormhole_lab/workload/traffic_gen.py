"""Poisson traffic at a target load with flow sizes from a CDF file: the workloads of HPCC's
``traffic_gen/traffic_gen.py`` (WebSearch, FbHdp, AliStorage2019, GoogleRPC2008), on which Parsimon, m3
and m4 are evaluated, as a FlowTable or an HPCC flow file.

The reference's semantics, which this module follows (its code is not reused):

* **CDF file.** One point per line, ``size_bytes cdf_percent``: sizes and percents both strictly
  increasing, the first percent 0 and the last 100. Between points the size is linear in the percent,
  so a size is drawn as the inverse CDF of a uniform ``u * 100`` with linear interpolation, truncated to
  whole bytes and raised to at least 1 B.
* **Average size.** The mean of that piecewise-linear distribution: the trapezoid sum
  ``sum((x[i-1] + x[i]) / 2 * (p[i] - p[i-1])) / 100``, before truncation to bytes.
* **Arrival rate.** Every host is an independent Poisson source of ``bw * load / 8 / avg`` flows per
  second (``bw`` the host link rate in bit/s): ``load`` is the share of the host's link its offered
  *payload* takes; no header overhead is added.
* **Destination.** Uniform over the other hosts.
* **Window.** Arrivals start after ``base_time`` (2 s in the reference) and run ``duration``; an arrival
  at exactly ``base_time + duration`` is kept. Times are whole nanoseconds (the reference prints
  ``%.9f`` seconds and its clock is 1 ns).
* **Output.** ``src dst 3 100 size start_seconds`` lines sorted by start time, ties by source host.

Deliberate differences (each quirk of the reference, and what we do instead):

* The reference has no seed (Python's global ``random``); here ``seed`` makes every table reproducible,
  using ``numpy.random.default_rng(seed)``. The random streams differ, so tables match the reference's
  in distribution, not flow by flow.
* The reference truncates every inter-arrival gap to whole ns before adding it up, which makes gaps
  0.5 ns shorter on average (a rate error of ``0.5 ns / mean gap``), and it drops each host's last
  arrival inside the window (a flow at ``t`` is written only if the host's *next* arrival is inside too),
  which lowers the offered load by one flow per host: 5 % for 320 hosts x 5 ms of WebSearch at 50 % and
  100 Gb/s (about 20 flows per host). By default we add the gaps exactly, truncate only each start time
  to its nanosecond, and keep every arrival in the window, so the offered load is the requested one.
  ``like_reference=True`` restores both quirks, for comparisons with the reference's own files.
* The reference writes an estimated flow count on line 1 and later overwrites its first digits in
  place, which corrupts the count when the real one has fewer digits (``9800`` over ``10050 `` reads
  ``98000``); we write the exact count.
* CDF problems are ``InputError``s naming ``<file>:<line>`` instead of "Not valid cdf". Blank lines and
  ``#`` comment lines are allowed; the reference's files have neither.
"""

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from wormhole_lab.errors import InputError, read_text_file
from wormhole_lab.workload.flows import FlowTable
from wormhole_lab.workload.hpcc_flow_format import MAX_SIZE_BYTES, format_seconds, write_flows

__all__ = [
    "REFERENCE_BASE_TIME_PS",
    "SizeCdf",
    "cdf_from_points",
    "host_link_rate",
    "poisson_flows",
    "poisson_on_topology",
    "read_cdf",
    "traffic_command",
    "write_traffic",
]

REFERENCE_BASE_TIME_PS = 2 * 10**12  # traffic_gen.py's base_t: flows start after 2 s
MAX_EXPECTED_FLOWS = 10**8  # about 7 GB of flow table; beyond it, generate in pieces
PG, DPORT = 3, 100  # the reference's flow lines: priority group 3, destination port 100
_PS_PER_NS = 1000
_CDF_FIX = "write one 'size_bytes cdf_percent' pair per line, e.g. '10000 15'"


@dataclass(frozen=True)
class SizeCdf:
    """A flow-size distribution: ``percent[i]`` % of flows are at most ``size[i]`` bytes, linear in between."""

    size: np.ndarray  # float64[k], strictly increasing, >= 0
    percent: np.ndarray  # float64[k], strictly increasing from 0 to 100
    source: str = "cdf"
    meta: dict = field(default_factory=dict)

    @property
    def mean_bytes(self) -> float:
        """The reference's average: the mean of the piecewise-linear distribution (trapezoid sum)."""
        x, p = self.size, self.percent
        return float(np.sum((x[1:] + x[:-1]) / 2.0 * np.diff(p)) / 100.0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` flow sizes: inverse CDF of a uniform percent, truncated to whole bytes, at least 1 B."""
        sizes = np.floor(np.interp(rng.random(n) * 100.0, self.percent, self.size)).astype(np.int64)
        return np.maximum(sizes, 1)

    def cdf(self, x) -> np.ndarray:
        """P(size <= x) of the continuous distribution (before truncation to bytes), in [0, 1]."""
        return np.interp(np.asarray(x, dtype=np.float64), self.size, self.percent) / 100.0


def read_cdf(path) -> SizeCdf:
    """Read a CDF file (the reference's ``traffic_gen`` format); every problem is an InputError at
    ``<path>:<line>`` saying what a valid line looks like."""
    path = Path(path)
    text = read_text_file(path, "CDF file", "give a text file of 'size_bytes cdf_percent' lines")
    points, lines = [], []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{lineno}"
        tokens = line.split()
        if len(tokens) != 2:
            raise InputError(where, f"expected 2 fields 'size cdf_percent', found {len(tokens)}: {line!r}", _CDF_FIX)
        values = []
        for name, tok in zip(("size", "cdf percent"), tokens, strict=True):
            try:
                v = float(tok)
            except ValueError:
                raise InputError(where, f"{name} {tok!r} is not a number", _CDF_FIX) from None
            if not math.isfinite(v):
                raise InputError(where, f"{name} {tok!r} is not a finite number", _CDF_FIX)
            values.append(v)
        points.append(values)
        lines.append(lineno)
    if not points:
        fix = "write 'size_bytes cdf_percent' lines from '0 0' to 'MAX 100'"
        raise InputError(f"{path}:1", "the CDF file has no data lines", fix)
    return cdf_from_points(points, source=str(path), lines=lines)


def cdf_from_points(points, source: str = "cdf", lines=None) -> SizeCdf:
    """A SizeCdf from ``[(size_bytes, cdf_percent), ...]``, checked as the reference checks a CDF file.

    Errors name ``<source>:<line>`` when ``lines`` gives the line of each point, else ``<source>[<index>]``."""
    pts = [tuple(p) for p in points]

    def at(i: int) -> str:
        return f"{source}:{lines[i]}" if lines is not None else f"{source}[{i}]"

    if not pts:
        raise InputError(f"{source}:1" if lines is not None else source, "the CDF has no points", _CDF_FIX)
    for i, pt in enumerate(pts):
        if len(pt) != 2 or not all(isinstance(v, int | float) and math.isfinite(v) for v in pt):
            raise InputError(at(i), f"point {pt!r} is not a pair of finite numbers", _CDF_FIX)
    size = np.array([p[0] for p in pts], dtype=np.float64)
    pct = np.array([p[1] for p in pts], dtype=np.float64)
    for i in range(len(pts)):
        if size[i] < 0:
            raise InputError(at(i), f"size {pts[i][0]:g} B is negative", "sizes are bytes, 0 or more")
        if size[i] > MAX_SIZE_BYTES:
            raise InputError(at(i), f"size {pts[i][0]:g} B is too large", f"use at most 2**53 = {MAX_SIZE_BYTES} B")
        if not 0 <= pct[i] <= 100:
            hint = "percents run from 0 to 100"
            raise InputError(at(i), f"cdf percent {pts[i][1]:g} is outside 0..100", hint)
    if pct[0] != 0:
        raise InputError(
            at(0),
            f"the first cdf percent is {pts[0][1]:g}, not 0",
            f"start with the smallest size at 0 %, e.g. '{pts[0][0]:g} 0' (the reference rejects other starts)",
        )
    for i in range(1, len(pts)):
        if size[i] <= size[i - 1]:
            raise InputError(
                at(i),
                f"size {pts[i][0]:g} does not increase (previous point: {pts[i - 1][0]:g})",
                "sort the points by size; sizes must increase strictly (no two points with one size)",
            )
        if pct[i] <= pct[i - 1]:
            raise InputError(
                at(i),
                f"cdf percent {pts[i][1]:g} does not increase (previous point: {pts[i - 1][1]:g})",
                "cdf percents must increase strictly; drop the point that repeats one",
            )
    if pct[-1] != 100:
        fix = "end with the largest size at 100 %, e.g. '30000000 100'"
        if pct[-1] <= 1:
            fix += "; if the file gives fractions 0..1, multiply them by 100"
        raise InputError(at(len(pts) - 1), f"the cdf ends at {pts[-1][1]:g} %, not 100", fix)
    return SizeCdf(size=size, percent=pct, source=source)


def poisson_flows(
    cdf,
    load: float,
    n_hosts: int,
    bw_bps: int,
    duration_ps: int,
    seed: int = 1,
    base_time_ps: int = REFERENCE_BASE_TIME_PS,
    like_reference: bool = False,
) -> FlowTable:
    """Poisson arrivals at ``load`` on hosts ``0..n_hosts-1`` with sizes from ``cdf`` (a path or a SizeCdf).

    Each host sends ``bw_bps * load / 8 / cdf.mean_bytes`` flows per second, uniformly to the other hosts,
    from ``base_time_ps`` for ``duration_ps``; start times are whole ns. Rows are sorted by start time, ties
    by source host. Same arguments, same table. ``like_reference`` keeps the reference's two rate quirks
    (module docstring). ``meta`` records the parameters and the offered load actually drawn.
    """
    size_cdf = cdf if isinstance(cdf, SizeCdf) else read_cdf(cdf)
    fn = "poisson_flows"
    load = _check_load(fn, load)
    n_hosts = _check_int(fn, "n_hosts", n_hosts, 2, "use at least 2 hosts (destinations are the other hosts)")
    bw_bps = _check_int(fn, "bw_bps", bw_bps, 1, "give the host link rate in bit/s, e.g. 100000000000")
    duration_ps = _check_int(fn, "duration_ps", duration_ps, 1, "give a positive duration, e.g. 5 ms = 5*10**9 ps")
    base_time_ps = _check_int(fn, "base_time_ps", base_time_ps, 0, "start at 0 or later, e.g. 2 s = 2*10**12 ps")
    if base_time_ps % _PS_PER_NS:
        raise InputError(
            f"{fn}(base_time_ps={base_time_ps})", "the base time is not a whole ns", "the reference's clock is 1 ns"
        )
    seed = _check_int(fn, "seed", seed, 0, "use a seed >= 0")
    mean = size_cdf.mean_bytes
    if not mean > 0:
        raise InputError(size_cdf.source, "the CDF's average size is 0 B", "give sizes above 0")
    gap_ns = 8.0 * mean / (bw_bps * load) * 1e9  # mean inter-arrival per host (the reference's avg_inter_arrival)
    window_ns = duration_ps / _PS_PER_NS
    expected = n_hosts * window_ns / gap_ns
    if expected > MAX_EXPECTED_FLOWS:
        raise InputError(
            f"{fn}(duration_ps={duration_ps})",
            f"about {expected:.3g} flows expected, more than {MAX_EXPECTED_FLOWS:.0e}",
            "shorten the duration or use fewer hosts; for more, generate pieces with other seeds and base times",
        )
    rng = np.random.default_rng(seed)
    src, t_ns = _arrivals(rng, n_hosts, gap_ns, window_ns, like_reference)
    start_ns = np.floor(t_ns).astype(np.int64)
    order = np.lexsort((t_ns, src, start_ns))  # by start, then source host, then arrival order
    src, start_ns = src[order], start_ns[order]
    n = len(src)
    size = size_cdf.sample(rng, n)
    dst = rng.integers(0, n_hosts - 1, size=n, dtype=np.int64)
    dst += dst >= src
    flows = _table(src, dst, size, base_time_ps + start_ns * _PS_PER_NS)
    meta = {
        "workload": "poisson",
        "cdf": size_cdf.source,
        "load": load,
        "n_hosts": n_hosts,
        "bw_bps": bw_bps,
        "duration_ps": duration_ps,
        "seed": seed,
        "base_time_ps": base_time_ps,
        "like_reference": bool(like_reference),
        "mean_size_bytes": mean,
        "offered_load": float(size.sum()) * 8.0 / (n_hosts * bw_bps * duration_ps * 1e-12),
    }
    return replace(flows, meta=meta)


def host_link_rate(topo, where: str = "topology") -> int:
    """The host bandwidth of ``topo``: the rate of each host's first link (its NIC, ifindex 1, as the
    reference's third.cc reads it); all hosts must agree."""
    hosts = topo.hosts
    if len(hosts) == 0:
        raise InputError(where, "the topology has no hosts", "give a topology with hosts")
    ends = np.concatenate([topo.link_a, topo.link_b])
    link_order = np.concatenate([np.arange(topo.n_links)] * 2)
    none = np.iinfo(np.int64).max
    first = np.full(topo.n_nodes, none, dtype=np.int64)  # each node's lowest-numbered link
    np.minimum.at(first, ends, link_order)
    has = first[hosts] < none
    if not has.all():
        h = int(hosts[np.argmin(has)])
        raise InputError(where, f"host {h} has no link", "connect every host to the network")
    nic = np.asarray(topo.link_rate_bps, dtype=np.int64)[first[hosts]]
    values = np.unique(nic)
    if len(values) != 1:
        raise InputError(
            where,
            f"the hosts' links run at different rates ({', '.join(str(int(v)) for v in values[:4])} bit/s)",
            "the poisson source needs one host bandwidth: give every host the same host_rate_bps",
        )
    return int(values[0])


def poisson_on_topology(
    topo,
    cdf,
    load: float,
    duration_ps: int,
    seed: int = 1,
    base_time_ps: int = 0,
    like_reference: bool = False,
) -> FlowTable:
    """``poisson_flows`` on the hosts of ``topo`` (host ``i`` of the generator is ``topo.hosts[i]``) at its
    host link rate; ``meta["generator"]`` holds the recipe, so a saved scenario stores it instead of flows."""
    size_cdf = cdf if isinstance(cdf, SizeCdf) else read_cdf(cdf)
    hosts = np.asarray(topo.hosts, dtype=np.int64)
    bw = host_link_rate(topo)
    flows = poisson_flows(size_cdf, load, len(hosts), bw, duration_ps, seed, base_time_ps, like_reference)
    if not np.array_equal(hosts, np.arange(len(hosts))):
        flows = _table(hosts[flows.src], hosts[flows.dst], flows.size, flows.start_ps, meta=flows.meta)
    recipe = {
        "cdf": size_cdf.source,
        "load": float(load),
        "duration_ps": int(duration_ps),
        "seed": int(seed),
        "base_time_ps": int(base_time_ps),
        "like_reference": bool(like_reference),
    }
    return replace(flows, meta={**flows.meta, "generator": {"poisson": recipe}})


def write_traffic(flows: FlowTable, path) -> int:
    """Write ``flows`` as an HPCC flow file, byte for byte what ``hpcc_flow_format.write_flows`` writes
    (``read_flows`` gives the same table back); returns the number of flows.

    Start times on the ns clock, sorted (what the generator makes), take a fast path: write_flows checks
    each distinct start time through numpy one at a time (about a minute for 700 000 flows); here the same
    check is exact integer arithmetic (a second). Anything else goes to write_flows."""
    start = np.asarray(flows.start_ps, dtype=np.int64)
    n = len(flows)
    if n == 0 or int(start.min()) < 0 or np.any(start % _PS_PER_NS) or np.any(np.diff(start) < 0):
        write_flows(flows, path)
        return n
    uniq, inverse = np.unique(start, return_inverse=True)
    texts = np.array(_start_texts(uniq), dtype=object)[inverse]
    cols = [np.asarray(a, dtype=np.int64).tolist() for a in (flows.src, flows.dst, flows.pg, flows.dport, flows.size)]
    lines = [f"{s} {d} {p} {dp} {sz} {t}\n" for s, d, p, dp, sz, t in zip(*cols, texts.tolist(), strict=True)]
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{n}\n")
        f.writelines(lines)
    return n


def traffic_command(
    cdf,
    load: float,
    hosts: int,
    bw_bps: int,
    duration_s: float,
    seed: int,
    out_path,
    base_time_s: float = 2.0,
    like_reference: bool = False,
) -> int:
    """What ``wormhole-lab traffic`` runs: generate the reference's workload and write it as an HPCC flow
    file at ``out_path``; returns the number of flows written. Times are seconds, as the reference's ``-t``."""
    duration_ps = _seconds_to_ps("duration_s", duration_s, positive=True)
    base_ps = _seconds_to_ps("base_time_s", base_time_s, positive=False)
    base_ps -= base_ps % _PS_PER_NS
    flows = poisson_flows(cdf, load, hosts, bw_bps, duration_ps, seed, base_ps, like_reference)
    return write_traffic(flows, out_path)


# --- internals -------------------------------------------------------------------------------------------------


def _arrivals(rng: np.random.Generator, n_hosts: int, gap_ns: float, window_ns: float, like_reference: bool):
    """Per host, the Poisson arrival times in (0, window_ns] (ns after the base time, as floats), host-major.

    Gaps are drawn in blocks of columns for the hosts still inside the window, so memory stays near the
    number of arrivals however long the window is."""
    expected = window_ns / gap_ns
    width = int(min(expected + 4.0 * math.sqrt(expected) + 8.0, max(16, (1 << 21) // n_hosts)))
    active = np.arange(n_hosts, dtype=np.int64)
    last = np.zeros(n_hosts, dtype=np.float64)
    hosts_out, times_out = [], []
    while len(active):
        gaps = rng.exponential(gap_ns, size=(len(active), width))
        if like_reference:
            np.floor(gaps, out=gaps)  # the reference's int(poisson(...)) per gap
        t = np.cumsum(gaps, axis=1)
        t += last[active, None]
        inside = t <= window_ns
        rows, cols = np.nonzero(inside)
        hosts_out.append(active[rows])
        times_out.append(t[rows, cols])
        last[active] = t[:, -1]
        active = active[inside[:, -1]]
    host = np.concatenate(hosts_out)
    t_ns = np.concatenate(times_out)
    order = np.lexsort((t_ns, host))
    host, t_ns = host[order], t_ns[order]
    if like_reference and len(host):
        # the reference writes a flow only when the host's next arrival is inside the window too
        keep = np.ones(len(host), dtype=bool)
        keep[:-1] = host[1:] == host[:-1]
        keep[-1] = False
        host, t_ns = host[keep], t_ns[keep]
    return host, t_ns


def _start_texts(start_ps: np.ndarray) -> list[str]:
    """Each start (a whole ns) in seconds as write_flows writes it: the exact decimal, or half a ns more
    when the double of the exact decimal would be read back as the ns before (ns-3's Seconds(): the double
    becomes 64.64 fixed point, times 10^9, truncated).

    The double of the decimal is ``ns / 1e9`` (both correctly rounded). From 2^-11 s on, the fixed point
    holds it exactly, so it reads back as ``ns`` iff ``double * 1e9 >= ns``, decided exactly with Dekker's
    error-free product; smaller times take the exact integer route."""
    ns = start_ps // _PS_PER_NS
    v = ns.astype(np.float64) / 1e9
    prod = v * 1e9
    err = _two_product_error(v, 1e9, prod)
    low = (prod - ns.astype(np.float64)) + err < 0  # Sterbenz: prod - ns is exact
    small = v < 2.0**-11
    texts = []
    for ps, is_low, is_small in zip(start_ps.tolist(), low.tolist(), small.tolist(), strict=True):
        text = format_seconds(ps)
        if is_small:
            num, den = float(text).as_integer_ratio()  # den is a power of 2
            is_low = (num * 2**64 // den) * 10**9 // 2**64 != ps // _PS_PER_NS
        texts.append(format_seconds(ps + _PS_PER_NS // 2) if is_low else text)
    return texts


def _two_product_error(a: np.ndarray, b: float, prod: np.ndarray) -> np.ndarray:
    """The exact ``a * b - prod`` for ``prod = fl(a * b)`` (Dekker's TwoProduct with Veltkamp splitting)."""

    def split(x):
        c = 134217729.0 * x  # 2^27 + 1
        hi = c - (c - x)
        return hi, x - hi

    ah, al = split(a)
    bh, bl = split(np.float64(b))
    return ((ah * bh - prod) + ah * bl + al * bh) + al * bl


def _table(src, dst, size, start_ps, meta=None) -> FlowTable:
    """A FlowTable like make_flows builds (pg 3, dport 100, sport 10000 + k per pair), vectorised."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    n = len(src)
    sport = np.empty(n, dtype=np.int64)
    if n:
        key = src * (int(dst.max()) + 1) + dst
        order = np.argsort(key, kind="stable")
        k = key[order]
        run_start = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
        rank = np.arange(n) - np.repeat(run_start, np.diff(np.concatenate([run_start, [n]])))
        sport[order] = 10000 + rank
    return FlowTable(
        src=src,
        dst=dst,
        size=np.asarray(size, dtype=np.int64),
        start_ps=np.asarray(start_ps, dtype=np.int64),
        pg=np.full(n, PG, dtype=np.int64),
        dport=np.full(n, DPORT, dtype=np.int64),
        sport=sport,
        meta=dict(meta or {}),
    )


def _check_load(fn: str, load) -> float:
    if isinstance(load, bool) or not isinstance(load, int | float | np.integer | np.floating):
        raise InputError(f"{fn}(load={load!r})", "load must be a number", "give a fraction in (0, 1], e.g. 0.3")
    load = float(load)
    if not 0 < load <= 1:
        hint = "give a fraction in (0, 1], e.g. 0.3 for 30 %"
        if 1 < load <= 100:
            hint += f" (for {load:g} % write {load / 100:g})"
        raise InputError(f"{fn}(load={load:g})", "load must be in (0, 1] of the host link rate", hint)
    return load


def _check_int(fn: str, name: str, value, minimum: int, fix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise InputError(f"{fn}({name}={value!r})", f"{name} must be an integer", fix)
    value = int(value)
    if value < minimum:
        raise InputError(f"{fn}({name}={value})", f"{name} must be at least {minimum}", fix)
    return value


def _seconds_to_ps(name: str, seconds, positive: bool) -> int:
    fn = "traffic_command"
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        raise InputError(f"{fn}({name}={seconds!r})", f"{name} must be a number of seconds", "e.g. 0.005 for 5 ms")
    ps = round(seconds * 1e12)
    if ps < 0 or (positive and ps <= 0):
        raise InputError(
            f"{fn}({name}={seconds!r})",
            f"{name} must be {'positive' if positive else 'at least 0'}",
            "e.g. 0.005 for 5 ms",
        )
    return ps
