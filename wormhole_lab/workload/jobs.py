"""Several jobs on one fabric: each job's workload made on its own GPUs, placed on the cluster, repeated, merged.

A ``Job`` is a workload (``Training``, ``SimaiFile``, ``FlowFile`` or ``Background`` traffic), a placement, a start
time and a number of iterations. ``jobs_flows(topo, jobs)`` makes each job's flows on job-local GPUs ``0..n-1``
(rank ``r`` is local GPU ``r``), maps local GPU ``i`` to host ``hosts[i]`` of its placement, shifts it by its start,
and stacks the jobs into one FlowTable, job after job. ``table.meta["jobs"]`` is the ``JobLayout``: which rows
belong to which job and iteration, and where each job runs.

Placements (``place_jobs``), on "units": whole servers when a job's GPU count is a multiple of the server size,
single GPUs otherwise. A server is ``topo.meta["gpus_per_server"]`` consecutive hosts (as ``rail_optimized`` makes
them), or 8 on topologies that do not say (``fat_tree``, ``leaf_spine``: 8 GPUs as in a DGX A100):
- ``packed``: the first free units, in host order;
- ``interleaved``: the job's units spread evenly over the free ones (round robin over servers): unit
  ``floor(j * free / need)`` of the free list for ``j = 0..need-1``; two equal jobs on a cluster they fill take
  every other server;
- ``random``: ``need`` free units drawn with ``numpy.random.default_rng(seed)``, in host order;
- a list of hosts: exactly the job's GPU count of them, rank ``i`` on the ``i``-th.
Jobs are placed in list order. A job with ``shares_gpus`` may use GPUs that other jobs use (background traffic
over the whole cluster): it is placed after the others, over every host, and takes none of them away.

Iterations: iteration ``k + 1`` repeats the job's flows after iteration ``k`` ends: its first flows wait for
every last flow of iteration ``k`` (flows nobody waits for) plus the job's trailing compute (``tail_ps``, the
optimizer step). So a job's iteration time is the time from one iteration's end to the next one's, and the
first iteration's is measured as a single iteration's is: first start to last completion plus the tail.
"""

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.flows import FlowTable, check_scale, scaled_sizes, stack_tables
from wormhole_lab.workload.hpcc_flow_format import read_flows
from wormhole_lab.workload.llm import training_iteration
from wormhole_lab.workload.models import MODELS, ComputeModel, get_model, placement_for
from wormhole_lab.workload.simai import read_simai, simai_flows
from wormhole_lab.workload.size_cdfs import size_cdf
from wormhole_lab.workload.traffic_gen import host_link_rate, poisson_flows

__all__ = [
    "DEFAULT_GPUS_PER_SERVER",
    "PLACEMENTS",
    "Background",
    "FlowFile",
    "Job",
    "JobLayout",
    "PlacedJob",
    "SimaiFile",
    "Training",
    "jobs_flows",
    "place_jobs",
]

PLACEMENTS = ("packed", "interleaved", "random")


@dataclass(frozen=True)
class Training:
    """One iteration of a Table 1 preset (``workload.llm.training_iteration``) on ``n_gpus`` GPUs (default: the
    preset's); ``options`` go to ``training_iteration`` (``micro_batches``, ``dp_buckets``, ``gpu_tflops``, ...).
    ``scale`` < 1 shrinks the iteration, keeping its shape: flow bytes (``flows.scaled_sizes``) and every compute
    time, the optimizer step included (``ComputeModel.scaled``), times ``scale``."""

    model: str
    n_gpus: int | None = None
    options: dict = field(default_factory=dict)
    scale: float = 1.0

    def gpus(self, free: int) -> int:
        return int(self.n_gpus if self.n_gpus is not None else placement_for(self.model).n_gpus)

    def local_flows(self, n_gpus: int, gpus_per_server: int) -> FlowTable:
        if self.model not in MODELS:
            raise InputError("Training.model", f"unknown model {self.model!r}", f"use one of {', '.join(MODELS)}")
        plan = placement_for(self.model, n_gpus, gpus_per_server)
        if self.scale == 1:
            return training_iteration(get_model(self.model), plan, **self.options)
        scale = check_scale(self.scale, "Training.scale")
        options = dict(self.options)
        gpu = {k: options.pop(k) for k in ("gpu_tflops", "efficiency") if k in options}
        compute = ComputeModel(**gpu).scaled(scale)
        return scaled_sizes(training_iteration(get_model(self.model), plan, compute=compute, **options), scale)


@dataclass(frozen=True)
class SimaiFile:
    """One pass of a SimAI/AICB workload file (``workload.simai``) on its ``all_gpus`` GPUs."""

    path: str
    tp_traffic: bool = False

    @cached_property
    def _workload(self):
        return read_simai(self.path)  # read once for both questions below

    def gpus(self, free: int) -> int:
        return int(self._workload.all_gpus)

    def local_flows(self, n_gpus: int, gpus_per_server: int) -> FlowTable:
        return simai_flows(self._workload, None, tp_traffic=self.tp_traffic)


@dataclass(frozen=True)
class FlowFile:
    """An HPCC flow file whose node ids are the job's local GPUs ``0..n-1`` (``n_gpus``, default the largest id
    plus one)."""

    path: str
    n_gpus: int | None = None

    @cached_property
    def _flows(self) -> FlowTable:
        return read_flows(self.path)  # read once for both questions below

    def _largest_id(self) -> int:
        return int(max(self._flows.src.max(), self._flows.dst.max())) if len(self._flows) else -1

    def gpus(self, free: int) -> int:
        return int(self.n_gpus) if self.n_gpus is not None else self._largest_id() + 1

    def local_flows(self, n_gpus: int, gpus_per_server: int) -> FlowTable:
        if self._largest_id() >= n_gpus:
            raise InputError(
                f"{self.path}", f"names GPU {self._largest_id()} of a {n_gpus}-GPU job",
                "give n_gpus larger than every node id in the file",
            )  # fmt: skip
        return self._flows


@dataclass(frozen=True)
class Background:
    """HPCC traffic_gen's Poisson traffic (``traffic_gen.poisson_flows``) among the job's hosts at ``load`` of the
    host link rate, for ``duration_ps`` from the job's start; sizes from ``cdf``, a CDF file or a name of
    ``size_cdfs.NAMED_CDFS`` such as "WebSearch". ``n_gpus``: how many hosts it runs on (default: every host the
    placement can give)."""

    cdf: str
    load: float
    duration_ps: int
    seed: int = 1
    n_gpus: int | None = None

    def gpus(self, free: int) -> int:
        return int(self.n_gpus if self.n_gpus is not None else free)

    def local_flows(self, n_gpus: int, gpus_per_server: int, bw_bps: int) -> FlowTable:
        return poisson_flows(size_cdf(self.cdf), self.load, n_gpus, bw_bps, self.duration_ps, self.seed, 0)


WORKLOADS = (Training, SimaiFile, FlowFile, Background)


@dataclass(frozen=True)
class Job:
    """A workload placed on the cluster. ``placement``: ``packed``, ``interleaved``, ``random`` (with ``seed``) or
    a sequence of host ids; ``start_ps``: when its first flows may start; ``iterations``: how many times its
    iteration runs, one after another (1 for background traffic)."""

    name: str
    workload: Training | SimaiFile | FlowFile | Background
    placement: str | tuple = "packed"
    start_ps: int = 0
    iterations: int = 1
    seed: int = 1
    shares_gpus: bool = False

    @property
    def kind(self) -> str:
        return "background" if isinstance(self.workload, Background) else "training"


@dataclass(frozen=True)
class PlacedJob:
    """A job as it runs: its hosts and its rows ``[first_flow, first_flow + iterations * flows_per_iteration)`` of the
    merged table, iteration ``k`` at ``first_flow + k * flows_per_iteration``."""

    job: Job
    hosts: np.ndarray
    first_flow: int
    flows_per_iteration: int
    tail_ps: int

    @property
    def name(self) -> str:
        return self.job.name

    @property
    def n_flows(self) -> int:
        return self.flows_per_iteration * self.job.iterations

    @property
    def rows(self) -> slice:
        return slice(self.first_flow, self.first_flow + self.n_flows)


@dataclass(frozen=True)
class JobLayout:
    """The jobs of a merged flow table, in table order."""

    jobs: tuple[PlacedJob, ...]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.jobs]

    def job_of_flow(self) -> np.ndarray:
        """int64[n_flows]: the index of each flow's job."""
        return np.repeat(np.arange(len(self.jobs)), [p.n_flows for p in self.jobs])

    def iteration_of_flow(self) -> np.ndarray:
        """int64[n_flows]: each flow's iteration (0-based) within its job."""
        parts = [np.repeat(np.arange(p.job.iterations), p.flows_per_iteration) for p in self.jobs]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def alone(self, j: int) -> Job:
        """Job ``j`` with its placement written out, to run it by itself on the same hosts."""
        return replace(self.jobs[j].job, placement=tuple(int(h) for h in self.jobs[j].hosts), shares_gpus=False)


# --- placement -------------------------------------------------------------------------------------------------


def _where(job: Job, i: int, key: str = "") -> str:
    return f"jobs[{i}] ({job.name})" + (f".{key}" if key else "")


def _check_job(job: Job, i: int) -> None:
    if not isinstance(job.workload, WORKLOADS):
        raise InputError(_where(job, i, "workload"), f"{job.workload!r} is not a workload",
                         "use Training(...), SimaiFile(...), FlowFile(...) or Background(...)")  # fmt: skip
    if isinstance(job.start_ps, bool) or not isinstance(job.start_ps, int | np.integer) or job.start_ps < 0:
        raise InputError(_where(job, i, "start"), f"start {job.start_ps!r} is negative or not an integer",
                         "give a start time of 0 or later, e.g. 200us")  # fmt: skip
    if isinstance(job.iterations, bool) or not isinstance(job.iterations, int | np.integer) or job.iterations < 1:
        raise InputError(_where(job, i, "iterations"), f"{job.iterations!r} iterations",
                         "run at least 1 iteration")  # fmt: skip
    if job.kind == "background":
        if job.iterations != 1:
            raise InputError(_where(job, i, "iterations"), "background traffic has no iterations",
                             "drop 'iterations' (give a longer duration for more traffic)")  # fmt: skip
        load = job.workload.load
        if isinstance(load, bool) or not isinstance(load, int | float) or not 0 < load <= 1:
            raise InputError(_where(job, i, "poisson.load"), f"background load {load!r} is not in (0, 1]",
                             "give the load as a fraction of the host link rate, e.g. 0.3")  # fmt: skip
    if isinstance(job.placement, str) and job.placement not in PLACEMENTS:
        raise InputError(_where(job, i, "placement"), f"unknown placement {job.placement!r}",
                         f"use one of {', '.join(PLACEMENTS)}, or a list of hosts")  # fmt: skip


DEFAULT_GPUS_PER_SERVER = 8  # a DGX A100 (the paper's servers), for topologies that do not say


def _server_size(topo: Topology) -> int:
    return int(topo.meta.get("gpus_per_server", DEFAULT_GPUS_PER_SERVER))


def _units(hosts: np.ndarray, taken: np.ndarray, size: int) -> list[np.ndarray]:
    """The free units of ``size`` consecutive hosts (whole units only), in host order."""
    n_units = len(hosts) // size
    units = hosts[: n_units * size].reshape(n_units, size)
    free = ~taken[: n_units * size].reshape(n_units, size).any(axis=1)
    return [units[u] for u in np.flatnonzero(free)]


def _policy_hosts(job: Job, i: int, need: int, hosts: np.ndarray, taken: np.ndarray, topo: Topology) -> np.ndarray:
    server = _server_size(topo)
    size = server if server > 1 and need % server == 0 else 1
    units = _units(hosts, taken, size)
    n_units = need // size
    if n_units > len(units):
        whole = " whole servers" if size > 1 else ""
        raise InputError(
            _where(job, i, "placement"),
            f"needs {need} GPUs ({n_units}{whole} of {size}) but only {len(units) * size} of the cluster's "
            f"{len(hosts)} are free" + (" as whole servers" if size > 1 else ""),
            "use fewer or smaller jobs, a larger topology, or 'shares_gpus: true' for traffic that may share GPUs",
        )
    if job.placement == "packed":
        chosen = range(n_units)
    elif job.placement == "interleaved":
        chosen = [j * len(units) // n_units for j in range(n_units)]
    else:
        chosen = sorted(np.random.default_rng(job.seed).choice(len(units), n_units, replace=False).tolist())
    return np.concatenate([units[u] for u in chosen]) if chosen else np.zeros(0, dtype=np.int64)


def _listed_hosts(job: Job, i: int, need: int, topo: Topology) -> np.ndarray:
    where = _where(job, i, "placement")
    try:
        listed = np.asarray([int(h) for h in job.placement], dtype=np.int64)
    except (TypeError, ValueError):
        raise InputError(where, f"{job.placement!r} is not a list of host ids", "e.g. [0, 1, 2, 3]") from None
    if len(listed) != need:
        raise InputError(where, f"lists {len(listed)} hosts for a job of {need} GPUs", f"list exactly {need} hosts")
    bad = [int(h) for h in listed if not (0 <= h < topo.n_nodes) or topo.is_switch[h]]
    if bad:
        raise InputError(where, f"node {bad[0]} is not a host of the topology", "list host ids of the topology")
    values, counts = np.unique(listed, return_counts=True)
    if (counts > 1).any():
        raise InputError(where, f"host {int(values[counts > 1][0])} is listed twice", "list each host once")
    return listed


def place_jobs(topo: Topology, jobs) -> list[np.ndarray]:
    """Each job's hosts (rank ``i`` on the ``i``-th), placed as the module docstring says; InputErrors name the job."""
    jobs = list(jobs)
    if not jobs:
        raise InputError("jobs", "the list of jobs is empty", "give at least one job")
    names = [j.name for j in jobs]
    for i, job in enumerate(jobs):
        if not isinstance(job, Job):
            raise InputError(f"jobs[{i}]", f"{job!r} is not a Job", "build it with Job(name, workload, ...)")
        if not isinstance(job.name, str) or not job.name:
            raise InputError(f"jobs[{i}].name", f"{job.name!r} is not a name", "give each job a non-empty name")
        if names.index(job.name) != i:
            raise InputError(
                _where(job, i, "name"), f"job name {job.name!r} is used twice", "give each job its own name"
            )
        _check_job(job, i)
    hosts = np.asarray(topo.hosts, dtype=np.int64)
    taken = np.zeros(len(hosts), dtype=bool)
    owner = np.full(topo.n_nodes, -1, dtype=np.int64)  # which exclusive job uses a host
    placed: list = [None] * len(jobs)
    # exclusive jobs first, in list order (explicit lists before policies, so a policy avoids them), then sharers
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i].shares_gpus, isinstance(jobs[i].placement, str), i))
    for i in order:
        job = jobs[i]
        pool = np.zeros(len(hosts), dtype=bool) if job.shares_gpus else taken
        need = job.workload.gpus(int((~pool).sum()))
        if need < 1:
            raise InputError(_where(job, i), "runs on no GPU", "give it at least one GPU")
        if need > len(hosts):
            raise InputError(_where(job, i), f"asks for {need} GPUs but the cluster has {len(hosts)}",
                             "use a larger topology or a smaller job")  # fmt: skip
        if isinstance(job.placement, str):
            chosen = _policy_hosts(job, i, need, hosts, pool, topo)
        else:
            chosen = _listed_hosts(job, i, need, topo)
            clash = owner[chosen] if not job.shares_gpus else np.full(len(chosen), -1)
            if (clash >= 0).any():
                k = int(np.argmax(clash >= 0))
                other = jobs[int(clash[k])].name
                raise InputError(_where(job, i, "placement"), f"host {int(chosen[k])} is also used by job {other!r}",
                                 "give jobs disjoint hosts, or 'shares_gpus: true' if they may share")  # fmt: skip
        if not job.shares_gpus:
            owner[chosen] = i
            taken |= np.isin(hosts, chosen)
        placed[i] = chosen
    return placed


# --- flows -----------------------------------------------------------------------------------------------------


def _repeat(table: FlowTable, iterations: int) -> FlowTable:
    """``iterations`` copies of an iteration's flows; copy ``k + 1``'s first flows wait for copy ``k``'s last ones
    plus the trailing compute."""
    n = len(table)
    if iterations == 1 or n == 0:
        return table
    counts = np.diff(table.dep_offset)
    roots = np.flatnonzero(counts == 0)
    waited = np.zeros(n, dtype=bool)
    waited[table.dep_ids] = True
    sinks = np.flatnonzero(~waited)
    # a later copy: the same edges, plus every root waiting for the previous copy's sinks (ids relative to it)
    later_counts = counts.copy()
    later_counts[roots] = len(sinks)
    later_offset = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(later_counts, out=later_offset[1:])
    owner = np.repeat(np.arange(n), counts)
    later_ids = np.empty(later_offset[-1], dtype=np.int64)
    later_ids[later_offset[owner] + np.arange(len(owner)) - table.dep_offset[owner]] = table.dep_ids + n
    later_ids[(later_offset[roots][:, None] + np.arange(len(sinks))).ravel()] = np.tile(sinks, len(roots))
    later_gap = table.gap_ps.copy()
    later_gap[roots] = table.tail_ps
    copies = range(1, iterations)
    ids = np.concatenate([table.dep_ids.astype(np.int64), *(later_ids + (k - 1) * n for k in copies)])
    offset = np.concatenate([table.dep_offset, *(later_offset[1:] + table.dep_offset[-1] + (k - 1) * later_offset[-1]
                                                for k in copies)])  # fmt: skip
    tile = lambda a: np.tile(a, iterations)  # noqa: E731
    return replace(
        table,
        src=tile(table.src), dst=tile(table.dst), size=tile(table.size), start_ps=tile(table.start_ps),
        pg=tile(table.pg), dport=tile(table.dport), sport=tile(table.sport), dep_offset=offset,
        dep_ids=ids.astype(np.int32), gap_ps=np.concatenate([table.gap_ps, *([later_gap] * (iterations - 1))]),
        phase=tile(table.phase),
    )  # fmt: skip


def _local_flows(job: Job, i: int, n_gpus: int, topo: Topology) -> FlowTable:
    try:
        if isinstance(job.workload, Background):
            if n_gpus < 2:
                raise InputError("n_gpus", "background traffic needs at least 2 hosts", "give it 2 or more")
            return job.workload.local_flows(n_gpus, _server_size(topo), host_link_rate(topo))
        return job.workload.local_flows(n_gpus, _server_size(topo))
    except InputError as exc:
        if Path(str(exc.where).split(":")[0]).is_file():
            raise  # a problem inside a workload file: located at its line
        raise InputError(_where(job, i, exc.where), exc.problem, exc.fix) from None


def jobs_flows(topo: Topology, jobs) -> FlowTable:
    """The merged flow table of ``jobs`` on ``topo`` (module docstring); ``meta["jobs"]`` is its JobLayout."""
    jobs = list(jobs)
    hosts_of = place_jobs(topo, jobs)
    tables, placed, first = [], [], 0
    for i, (job, hosts) in enumerate(zip(jobs, hosts_of, strict=True)):
        local = _local_flows(job, i, len(hosts), topo)
        one = replace(local, src=hosts[local.src], dst=hosts[local.dst], start_ps=local.start_ps + int(job.start_ps))
        tables.append(_repeat(one, int(job.iterations)))
        placed.append(PlacedJob(job, hosts, first, len(local), int(local.tail_ps)))
        first += len(tables[-1])
    merged = stack_tables(tables, tail_ps=max(p.tail_ps for p in placed))
    return replace(merged, meta={"jobs": JobLayout(tuple(placed))})
