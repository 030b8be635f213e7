"""Scenario files: a whole run (cluster, traffic, congestion control, telemetry) in one YAML file.

Format (full reference with examples: ``docs/scenario-format.md``)::

    name: incast-hpcc                 # optional, default: the file's stem
    description: 8-to-1 incast        # optional free text (kept in Scenario.meta["description"])
    topology:                         # required: a builder and its arguments ...
      builder: star                   #   fat_tree | star | dumbbell | leaf_spine | rail_optimized
      n_hosts: 9                      #   arguments of topology.builders.<builder>
      host_rate_bps: 100Gbps          #   *_bps: integer bit/s or a rate text; *_ps: integer ps or a time text
    # topology: {file: topology.txt}  # ... or an HPCC / SimAI topology file
    # topology: {astra: network.yml}  # ... or an ASTRA-sim analytical network configuration
    flows:                            # required (or jobs), exactly one source:
      incast: {senders: [1, 2, 3], receiver: 0, size: 1000000}
    # flows: {file: flow.txt}                          HPCC flow file
    # flows: {htsim: traffic.cm, start_unit: us}       htsim connection matrix (start_unit: ps | ns | us)
    # flows: {permutation: {size: 1000000, seed: 1}}   every host sends to another, a random derangement
    # flows: {simai: workload.txt, tp_traffic: false}  one pass of a SimAI/AICB workload on the topology's GPUs
    # flows: {poisson: {cdf: WebSearch.txt, load: 0.3, duration: 5ms, seed: 1}}  HPCC traffic_gen's workload
    # flows: {chakra: {traces: et/all_reduce, system: system.json}}  Chakra traces as ASTRA-sim runs them
    # jobs:                           # instead of flows: several workloads on one fabric (workload/jobs.py)
    #   - {name: a, training: {model: GPT-7B, n_gpus: 64, scale: 0.01}, placement: interleaved, iterations: 2}
    #   - {name: bg, poisson: {cdf: WebSearch.txt, load: 0.3, duration: 1ms}, shares_gpus: true}
    # alone: wormhole                 # with jobs: mode of each job's run alone, for its slowdown (or off)
    cca: hp                           # required: a preset of engine.presets (run.py's --cc names)
    host_bw_gbps: 100                 # optional preset argument (default 100)
    hpai_mbps: 50                     # optional, hp only
    config:                           # optional EngineConfig overrides, by field name
      stop_time_ps: 10ms
    telemetry: off                    # optional: off | on | a mapping of Telemetry fields
    wormhole: {memo: memo.sqlite}     # optional: memo (default true: within the run; false: off; or a DB file),
                                      # audit K and steady-test knobs (theta, window, ...)

Paths are relative to the YAML file. Every problem is an ``InputError`` located at ``<file>:<line>``
whose message names the key (``config.rate_ai_bps``) and whose fix lists the allowed keys or values,
with the closest match first ("did you mean 'topology'?").

``load_scenario(path)`` returns a checked ``Scenario`` (topology and flows are validated against each
other, the config and telemetry settings too). ``scenario_save.save_scenario(scenario, path)`` writes a YAML file that
loads back to equal topology arrays, flows and config: a topology made by a builder is stored as the
builder and its arguments (from ``Topology.meta``), any other one as an HPCC topology file next to the
YAML; flows from a generator are stored as the generator, flows read from an htsim file as a copy of that
file, other flows as an HPCC flow file (or a connection matrix in ps when their start times are not whole
nanoseconds) next to the YAML. The config is stored as the preset closest to it plus the fields that differ.
"""

import inspect
import re
import types
import warnings
from dataclasses import fields
from pathlib import Path

from wormhole_lab.astra_run import astra_wire_per_payload, with_link_ecn
from wormhole_lab.chakra_results import astra_network_of
from wormhole_lab.engine.config import CCA_NAMES, INT_LINE_RATES, RNG_NAMES, EngineConfig
from wormhole_lab.engine.presets import PRESETS, preset
from wormhole_lab.errors import InputError, read_yaml_file
from wormhole_lab.job_results import ALONE_MODES
from wormhole_lab.simulation import Scenario, _min_interval_ps
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.astra_network import astra_topology, read_astra_network
from wormhole_lab.topology.builders import dumbbell, fat_tree, leaf_spine, rail_optimized, star
from wormhole_lab.topology.hpcc_format import read_topology
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.astra_system import read_astra_system, read_comm_groups
from wormhole_lab.workload.chakra import read_chakra
from wormhole_lab.workload.chakra_flows import chakra_flows
from wormhole_lab.workload.flows import FlowTable
from wormhole_lab.workload.generators import TRAINING_OPTIONS, incast, permutation, training
from wormhole_lab.workload.hpcc_flow_format import read_flows
from wormhole_lab.workload.htsim_cm import START_UNITS, read_cm
from wormhole_lab.workload.jobs import PLACEMENTS, Background, FlowFile, Job, SimaiFile, Training, jobs_flows
from wormhole_lab.workload.models import MODELS
from wormhole_lab.workload.simai import read_simai, simai_flows
from wormhole_lab.workload.size_cdfs import NAMED_CDFS, size_cdf
from wormhole_lab.workload.traffic_gen import poisson_on_topology
from wormhole_lab.workload.validate import check_flows
from wormhole_lab.wormhole.settings import WormholeConfig
from wormhole_lab.wormhole.steady import SteadyConfig
from wormhole_lab.yaml_values import YamlValues, allowed_fix, index_lines, kind_of

__all__ = ["BUILDERS", "FLOW_SOURCES", "TOP_LEVEL_KEYS", "load_scenario", "scenario_from_dict"]

BUILDERS = {
    "fat_tree": fat_tree,
    "star": star,
    "dumbbell": dumbbell,
    "leaf_spine": leaf_spine,
    "rail_optimized": rail_optimized,
}
TOP_LEVEL_KEYS = (
    "name", "description", "topology", "flows", "jobs", "alone", "cca", "host_bw_gbps", "hpai_mbps", "config",
    "telemetry", "wormhole",
)  # fmt: skip
WORMHOLE_KEYS = (
    "memo",
    "theta",
    "window",
    "interval_ps",
    "min_skip_ps",
    "line_window",
    "cycles",
    "audit",
    "audit_windows",
    "tail_packets",
)
REQUIRED_KEYS = ("topology", "cca")  # and one of "flows" and "jobs"
JOB_SOURCES = ("training", "simai", "file", "poisson")
JOB_KEYS = (
    "name", *JOB_SOURCES, "n_gpus", "tp_traffic", "placement", "seed", "start", "iterations", "shares_gpus",
)  # fmt: skip
FLOW_SOURCES = ("file", "htsim", "simai", "permutation", "incast", "training", "poisson", "chakra")
FLOW_SOURCE_OPTIONS = {"htsim": ("start_unit",), "simai": ("tp_traffic",)}
TRAINING_KEYS = ("model", "n_gpus", *TRAINING_OPTIONS)
JOB_TRAINING_KEYS = (*TRAINING_KEYS, "scale")
POISSON_KEYS = ("cdf", "load", "duration", "seed", "base_time", "like_reference")
TELEMETRY_KEYS = (
    "interval_ps", "ports", "flows", "chunk_samples", "max_ports", "max_flows", "enabled",
    "start_ps", "end_ps", "idle_samples",
)  # fmt: skip
CONFIG_FIELDS = tuple(f.name for f in fields(EngineConfig) if f.name != "cca")
_CONFIG_TYPES = {f.name: f.type for f in fields(EngineConfig)}
_ECN_MAPS = ("kmin_bytes", "kmax_bytes", "pmax")


# --- entry points ----------------------------------------------------------------------------------------------


def load_scenario(path) -> Scenario:
    """Read, validate and build the Scenario described by a YAML file (see the module docstring)."""
    path = Path(path)
    node, doc = read_yaml_file(path, "scenario file", "give a YAML scenario file saved as UTF-8")
    if doc is None:
        raise InputError(
            f"{path}:1", "the scenario file is empty", f"write at least the keys {', '.join(REQUIRED_KEYS)}"
        )
    lines: dict[tuple, int] = {}
    if node is not None:
        index_lines(node, (), lines, str(path), set())
    return _Loader(str(path), path.parent, lines).scenario(doc, default_name=path.stem)


def scenario_from_dict(doc: dict, base_dir=".", source: str = "<scenario>") -> Scenario:
    """Build a Scenario from an already-parsed document (same keys as the YAML file); errors name ``source``."""
    return _Loader(source, Path(base_dir), {}).scenario(doc, default_name="scenario")


# --- loading ---------------------------------------------------------------------------------------------------


class _Loader(YamlValues):
    """Validates a parsed document section by section; every error names ``<file>:<line>`` and the key."""

    # sections

    def scenario(self, doc, default_name: str) -> Scenario:
        if doc is None:
            raise self.error((), "the scenario file is empty", f"write at least the keys {', '.join(REQUIRED_KEYS)}")
        doc = self.mapping(doc, (), "scenario keys")
        self.keys(doc, (), TOP_LEVEL_KEYS, REQUIRED_KEYS)
        name = self.text(doc["name"], ("name",)) if "name" in doc else default_name
        meta: dict = {"scenario_file": self.source}
        if "description" in doc:
            meta["description"] = self.text(doc["description"], ("description",))
        topo = self.topology(doc["topology"])
        if ("flows" in doc) == ("jobs" in doc):
            raise self.error((), "needs exactly one of 'flows' (one workload) and 'jobs' (several on one fabric)",
                             "keep 'flows:' for one workload, or list the workloads under 'jobs:'")  # fmt: skip
        if "alone" in doc and "jobs" not in doc:
            raise self.error(("alone",), "is for scenarios with 'jobs:'", "drop 'alone:' or list the jobs")
        flows = self.flows(doc["flows"], topo) if "flows" in doc else self.jobs(doc["jobs"], topo)
        alone = self.choice(doc.get("alone", "wormhole"), ("alone",), ALONE_MODES)
        config, preset_args = self.config(doc)
        overrides = doc.get("config") if isinstance(doc.get("config"), dict) else {}
        if topo.meta.get("builder") == "astra_network" and not any(k in overrides for k in _ECN_MAPS):
            config = with_link_ecn(config, topo)  # an ASTRA-sim network's rates are not the preset's bw and 4 x bw
        self.check_ecn(config, topo, doc)
        meta["preset"] = preset_args
        # several jobs run for many iterations, and their results are per job: series of every flow and switch port
        # for that long are opt-in (two GPT-7B jobs, two iterations each: 5.8 GiB by 139 of their 512 ms)
        telemetry = self.telemetry(doc.get("telemetry", "jobs" not in doc), topo, len(flows))
        wormhole = self.wormhole(doc.get("wormhole", {}))
        scenario = Scenario(
            topo, flows, config, name=name, telemetry=telemetry, wormhole=wormhole, meta=meta, alone_mode=alone
        )
        if telemetry.enabled:
            self.check_telemetry(scenario)
        return scenario

    def topology(self, spec) -> Topology:
        path = ("topology",)
        spec = self.mapping(spec, path, "'builder' and its arguments, 'file', or 'astra'")
        if "file" in spec:
            self.keys(spec, path, ("file",))
            return read_topology(self.file(spec["file"], path + ("file",)))  # errors name the topology file's line
        if "astra" in spec:
            self.keys(spec, path, ("astra",))
            network = read_astra_network(self.file(spec["astra"], path + ("astra",)))  # errors name its line
            # messages move at ASTRA-sim's bandwidth with the default payload's headers on top (astra_run)
            return astra_topology(network, wire_per_payload=astra_wire_per_payload(EngineConfig.payload_bytes))
        if "builder" not in spec:
            raise self.error(
                path,
                "needs 'builder' (with its arguments) or 'file'",
                f"e.g. 'builder: fat_tree' and 'k: 4'; builders: {', '.join(BUILDERS)}",
            )
        name = self.choice(spec["builder"], path + ("builder",), BUILDERS)
        builder = BUILDERS[name]
        params = inspect.signature(builder).parameters
        args = {}
        for key, value in spec.items():
            if key == "builder":
                continue
            if key not in params:
                raise self.error(path + (key,), f"{name} has no argument {key!r}", allowed_fix(key, params))
            args[key] = self.builder_arg(value, path + (key,), params[key])
        missing = [p for p, v in params.items() if v.default is inspect.Parameter.empty and p not in args]
        if missing:
            raise self.error(path, f"{name} needs {', '.join(map(repr, missing))}", f"add '{missing[0]}: <value>'")
        try:
            return builder(**args)
        except InputError as exc:
            named = re.search(r"\((\w+)=", exc.where)  # builders name the argument: "fat_tree(k=3)"
            at = path + (named.group(1),) if named and named.group(1) in args else path
            raise self.rewrap(at, exc) from None

    def builder_arg(self, value, path: tuple, param: inspect.Parameter):
        key = param.name
        if value is None and param.default is None:
            return None
        if key.endswith("_bps"):
            return self.rate(value, path)
        if key.endswith("_ps"):
            return self.time(value, path)
        if param.annotation is bool:
            return self.boolean(value, path)
        return self.integer(value, path)

    def flows(self, spec, topo: Topology) -> FlowTable:
        path = ("flows",)
        spec = self.mapping(spec, path, "one flow source")
        sources = [k for k in spec if k in FLOW_SOURCES]
        if len(sources) != 1:
            for key in spec:
                if key not in FLOW_SOURCES and all(key not in opts for opts in FLOW_SOURCE_OPTIONS.values()):
                    raise self.error(path + (key,), f"unknown flow source {key!r}", allowed_fix(key, FLOW_SOURCES))
            problem = "names no flow source" if not sources else f"names {len(sources)} sources ({', '.join(sources)})"
            raise self.error(path, problem, f"give exactly one of {', '.join(FLOW_SOURCES)}")
        kind = sources[0]
        self.keys(spec, path, (kind, *FLOW_SOURCE_OPTIONS.get(kind, ())))
        sub = path + (kind,)
        if kind == "file":
            flows = read_flows(self.file(spec["file"], sub))
        elif kind == "htsim":
            unit = self.choice(spec.get("start_unit", "us"), path + ("start_unit",), START_UNITS)
            flows = read_cm(self.file(spec["htsim"], sub), start_unit=unit)
        elif kind == "simai":
            tp_traffic = self.boolean(spec.get("tp_traffic", False), path + ("tp_traffic",))
            flows = simai_flows(read_simai(self.file(spec["simai"], sub)), topo, tp_traffic=tp_traffic)
        elif kind == "permutation":
            args = self.mapping(spec[kind], sub, "'size' and 'seed'")
            self.keys(args, sub, ("size", "seed"), ("size",))
            size = self.integer(args["size"], sub + ("size",), minimum=1)
            seed = self.integer(args.get("seed", 1), sub + ("seed",), minimum=0)
            if len(topo.hosts) < 2:
                raise self.error(sub, "a permutation needs at least 2 hosts", "use a topology with more hosts")
            flows = permutation(topo, size, seed)
        elif kind == "training":
            args = self.mapping(spec[kind], sub, "'model' and optional 'n_gpus', 'micro_batches', ...")
            self.keys(args, sub, TRAINING_KEYS, ("model",))
            model = self.choice(args["model"], sub + ("model",), tuple(MODELS))
            values = {"model": model, "n_gpus": self.integer(args.get("n_gpus", len(topo.hosts)), sub + ("n_gpus",), 1)}
            values |= self.training_options(args, sub)
            try:
                flows = training(topo, **values)
            except InputError as exc:
                raise self.rewrap(sub, exc) from None
        elif kind == "poisson":
            flows = self.poisson(spec[kind], sub, topo)
        elif kind == "chakra":
            flows = self.chakra(spec[kind], sub, topo)
        else:
            args = self.mapping(spec[kind], sub, "'senders', 'receiver' and 'size'")
            self.keys(args, sub, ("senders", "receiver", "size"), ("senders", "receiver", "size"))
            senders = args["senders"]
            if not isinstance(senders, list) or not senders:
                raise self.error(
                    sub + ("senders",),
                    f"must be a non-empty list of host ids, got {kind_of(senders)}",
                    "e.g. [1, 2, 3]",
                )
            senders = [self.host(s, sub + ("senders", i), topo) for i, s in enumerate(senders)]
            if len(set(senders)) != len(senders):
                dup = next(s for s in senders if senders.count(s) > 1)
                raise self.error(sub + ("senders",), f"host {dup} is listed twice", "list each sender once")
            receiver = self.host(args["receiver"], sub + ("receiver",), topo)
            if receiver in senders:
                raise self.error(sub + ("receiver",), f"host {receiver} is also a sender", "remove it from senders")
            size = self.integer(args["size"], sub + ("size",), minimum=1)
            flows = incast(senders, receiver, size)
        try:
            check_flows(flows, topo, where="flows")
        except InputError as exc:
            raise self.rewrap(sub, exc) from None
        return flows

    def chakra(self, spec, path: tuple, topo: Topology) -> FlowTable:
        """``{traces: DIR/PREFIX, system: system.json, comm_groups: groups.json}``: rank r on the topology's r-th
        host, laid out as the ASTRA-sim network the topology came from (one dimension of all ranks otherwise)."""
        args = self.mapping(spec, path, "'traces' and 'system'")
        self.keys(args, path, ("traces", "system", "comm_groups"), ("traces", "system"))
        prefix = self.text(args["traces"], path + ("traces",))
        system = read_astra_system(self.file(args["system"], path + ("system",)))
        groups = (
            read_comm_groups(self.file(args["comm_groups"], path + ("comm_groups",))) if "comm_groups" in args else None
        )
        try:
            trace = read_chakra(prefix if Path(prefix).is_absolute() else self.base / prefix)
            network = astra_network_of(topo)
            dims = [d.npus for d in network.dims] if network else None
            return chakra_flows(trace, system, topo.hosts, dims=dims, comm_groups=groups)
        except InputError as exc:
            raise self.rewrap(path, exc) from None

    def jobs(self, spec, topo: Topology) -> FlowTable:
        """Several workloads on one fabric (``workload.jobs``): each a mapping with a name and one source."""
        path = ("jobs",)
        if not isinstance(spec, list) or not spec:
            raise self.error(path, f"must be a non-empty list of jobs, got {kind_of(spec)}",
                             "write one '- name: ...' entry per job")  # fmt: skip
        jobs = [self.job(entry, path + (i,), topo) for i, entry in enumerate(spec)]
        try:
            flows = jobs_flows(topo, jobs)
        except InputError as exc:
            if Path(exc.where.split(":")[0]).is_file():
                raise  # a problem inside a workload file: located at its line
            index = re.match(r"jobs\[(\d+)\][^.]*\.?(\w*)", exc.where)
            at = path
            if index:
                at = path + (int(index.group(1)),)
                key = "poisson" if index.group(2) == "poisson" else index.group(2)
                at = at + (key,) if key in JOB_KEYS and key in spec[int(index.group(1))] else at
            raise self.error(at, exc.problem, exc.fix) from None
        try:
            check_flows(flows, topo, where="jobs")
        except InputError as exc:
            raise self.rewrap(path, exc) from None
        return flows

    def job(self, entry, path: tuple, topo: Topology) -> Job:
        entry = self.mapping(entry, path, "a job: 'name', one workload and its placement")
        self.keys(entry, path, JOB_KEYS, ("name",))
        sources = [k for k in JOB_SOURCES if k in entry]
        if len(sources) != 1:
            problem = "names no workload" if not sources else f"names {len(sources)} workloads ({', '.join(sources)})"
            raise self.error(path, problem, f"give exactly one of {', '.join(JOB_SOURCES)}")
        kind = sources[0]
        sub = path + (kind,)
        n_gpus = self.integer(entry["n_gpus"], path + ("n_gpus",), minimum=1) if "n_gpus" in entry else None
        for key, allowed_with in (("n_gpus", ("file", "poisson")), ("tp_traffic", ("simai",))):
            if key in entry and kind not in allowed_with:
                fix = "give it inside 'training:'" if kind == "training" and key == "n_gpus" else f"drop '{key}'"
                raise self.error(path + (key,), f"is not an option of a '{kind}' job", fix)
        if kind == "training":
            args = self.mapping(entry[kind], sub, "'model' and optional 'n_gpus', 'scale', 'micro_batches', ...")
            self.keys(args, sub, JOB_TRAINING_KEYS, ("model",))
            model = self.choice(args["model"], sub + ("model",), tuple(MODELS))
            options = self.training_options(args, sub)
            gpus = self.integer(args["n_gpus"], sub + ("n_gpus",), minimum=1) if "n_gpus" in args else None
            scale = self.number(args.get("scale", 1.0), sub + ("scale",))
            if not 0 < scale <= 1:
                raise self.error(sub + ("scale",), f"must be in (0, 1], got {scale:g}", "e.g. 0.01")
            workload = Training(model, gpus, options, scale)
        elif kind == "simai":
            tp_traffic = self.boolean(entry.get("tp_traffic", False), path + ("tp_traffic",))
            workload = SimaiFile(str(self.file(entry[kind], sub)), tp_traffic)
        elif kind == "file":
            workload = FlowFile(str(self.file(entry[kind], sub)), n_gpus)
        else:
            args = self.mapping(entry[kind], sub, "'cdf', 'load', 'duration' and optional 'seed'")
            self.keys(args, sub, ("cdf", "load", "duration", "seed"), ("cdf", "duration"))
            if "load" not in args:
                raise self.error(sub, "background traffic with no load",
                                 "add 'load:', a fraction of the host link rate, e.g. 0.3")  # fmt: skip
            workload = Background(*self.poisson_args(args, sub, "1ms"), n_gpus)
        placement = entry.get("placement", "packed")
        if isinstance(placement, list):
            placement = tuple(self.host(h, path + ("placement", i), topo) for i, h in enumerate(placement))
        else:
            placement = self.choice(placement, path + ("placement",), PLACEMENTS)
        start = entry.get("start", 0)
        number = isinstance(start, int | float) and not isinstance(start, bool)
        if (number and start < 0) or (isinstance(start, str) and start.strip().startswith("-")):
            raise self.error(path + ("start",), f"a job cannot start before the run: {start!r}", "use 0 or later")
        return Job(
            name=self.text(entry["name"], path + ("name",)),
            workload=workload,
            placement=placement,
            start_ps=self.unit_time(start, path + ("start",), "200us"),
            iterations=self.integer(entry.get("iterations", 1), path + ("iterations",), minimum=1),
            seed=self.integer(entry.get("seed", 1), path + ("seed",), minimum=0),
            shares_gpus=self.boolean(entry.get("shares_gpus", False), path + ("shares_gpus",)),
        )

    def training_options(self, args: dict, sub: tuple) -> dict:
        """The ``training_iteration`` options given in ``args`` (``TRAINING_OPTIONS``), checked."""
        options = {
            k: self.integer(args[k], sub + (k,), minimum=1) for k in ("micro_batches", "dp_buckets") if k in args
        }
        return options | {k: self.number(args[k], sub + (k,)) for k in ("gpu_tflops", "efficiency") if k in args}

    def poisson_args(self, args: dict, sub: tuple, example: str) -> tuple[str, float, int, int]:
        """(cdf, load, duration, seed) of a poisson mapping: a load in (0, 1], a positive duration."""
        cdf = self.cdf(args["cdf"], sub + ("cdf",))
        load = self.number(args["load"], sub + ("load",))
        if not 0 < load <= 1:
            fix = "a fraction of the host link rate in (0, 1], e.g. 0.3 for 30 %"
            raise self.error(sub + ("load",), f"must be in (0, 1], got {load:g}", fix)
        duration = self.unit_time(args["duration"], sub + ("duration",), example)
        if duration <= 0:
            raise self.error(sub + ("duration",), "must be positive", f"e.g. {example}")
        return cdf, load, duration, self.integer(args.get("seed", 1), sub + ("seed",), minimum=0)

    def poisson(self, spec, sub: tuple, topo: Topology) -> FlowTable:
        """HPCC traffic_gen's workload on the topology's hosts at their link rate (docs/scenario-format.md)."""
        args = self.mapping(spec, sub, "'cdf', 'load', 'duration' and optional 'seed', 'base_time', 'like_reference'")
        self.keys(args, sub, POISSON_KEYS, ("cdf", "load", "duration"))
        cdf, load, duration, seed = self.poisson_args(args, sub, "5ms")
        base = self.unit_time(args.get("base_time", 0), sub + ("base_time",), "2s")
        if base % 1000:
            raise self.error(sub + ("base_time",), "is not a whole ns", "the reference's clock is 1 ns, e.g. 2s")
        like_reference = self.boolean(args.get("like_reference", False), sub + ("like_reference",))
        if len(topo.hosts) < 2:
            raise self.error(sub, "the poisson source needs at least 2 hosts", "use a topology with more hosts")
        try:
            flows = poisson_on_topology(topo, size_cdf(cdf), load, duration, seed, base, like_reference)
        except InputError as exc:
            if exc.where.startswith(str(cdf)):
                raise  # a problem in the CDF file: located at its line
            raise self.rewrap(sub, exc) from None
        if len(flows) == 0:
            raise self.error(
                sub, "generated no flows", "give a longer duration or a higher load (or check the CDF's sizes)"
            )
        return flows

    def cdf(self, value, path: tuple) -> str:
        """A flow-size CDF: a file (relative to the YAML file) or a name of ``size_cdfs.NAMED_CDFS``."""
        name = self.text(value, path)
        if name in NAMED_CDFS and not (self.base / name).is_file():
            return name
        try:
            return str(self.file(value, path))
        except InputError as exc:
            raise InputError(exc.where, exc.problem, f"{exc.fix}, or name one of {', '.join(NAMED_CDFS)}") from None

    def host(self, value, path: tuple, topo: Topology) -> int:
        v = self.integer(value, path, minimum=0)
        if v >= topo.n_nodes or topo.is_switch[v]:
            hosts = topo.hosts
            shown = (
                f"{int(hosts[0])}..{int(hosts[-1])}"
                if len(hosts) and hosts[-1] - hosts[0] + 1 == len(hosts)
                else "see topology"
            )
            raise self.error(path, f"node {v} is not a host of the topology", f"use a host id ({shown})")
        return v

    def config(self, doc: dict) -> tuple[EngineConfig, dict]:
        cca = doc["cca"]
        if isinstance(cca, str) and cca in CCA_NAMES and cca not in PRESETS:
            names = [p for p in PRESETS if preset(p).cca == cca]
            raise self.error(("cca",), f"{cca!r} is an algorithm, not a preset", f"use a preset: {', '.join(names)}")
        name = self.choice(cca, ("cca",), PRESETS)
        bw = self.integer(doc.get("host_bw_gbps", 100), ("host_bw_gbps",))
        hpai = doc.get("hpai_mbps")
        hpai = None if hpai is None else self.integer(hpai, ("hpai_mbps",))
        try:
            base = preset(name, host_bw_gbps=bw, hpai_mbps=hpai)
        except InputError as exc:
            key = "hpai_mbps" if "hpai" in exc.where else "host_bw_gbps" if "host_bw" in exc.where else "cca"
            raise self.error((key,), exc.problem, exc.fix) from None
        preset_args = {"name": name, "host_bw_gbps": bw, "hpai_mbps": hpai}
        overrides_doc = doc.get("config", {})
        overrides_doc = {} if overrides_doc is None else self.mapping(overrides_doc, ("config",), "EngineConfig fields")
        overrides = {}
        for key, value in overrides_doc.items():
            path = ("config", key)
            if key == "cca":
                raise self.error(
                    path, "the algorithm comes from the preset", "set the top-level key 'cca' to a preset name"
                )
            if key not in CONFIG_FIELDS:
                raise self.error(path, f"unknown EngineConfig field {key!r}", allowed_fix(key, CONFIG_FIELDS))
            overrides[key] = self.config_value(key, value, path)
        try:
            return base.with_(**overrides), preset_args
        except InputError as exc:
            field = exc.where.removeprefix("EngineConfig.").split("[")[0].split("/")[0]
            fix = exc.fix
            if field in _ECN_MAPS and field in overrides:
                fix += "; a map under config replaces the preset's whole map, so give kmin_bytes, kmax_bytes and pmax"
            raise self.error(("config", field) if field in overrides else ("cca",), exc.problem, fix) from None

    def check_ecn(self, cfg: EngineConfig, topo: Topology, doc: dict) -> None:
        """Every link speed at a switch needs ECN thresholds (and, for HPCC, an INT-encodable speed), as the
        engine checks when a run starts; done here so that the error points at the scenario file."""
        at_switch = topo.is_switch[topo.link_a] | topo.is_switch[topo.link_b]
        overridden = isinstance(doc.get("config"), dict) and any(k in doc["config"] for k in _ECN_MAPS)
        for rate in sorted({int(r) for r in topo.link_rate_bps[at_switch]}):
            if cfg.cca == "hpcc" and rate not in INT_LINE_RATES:
                raise self.error(
                    ("topology",),
                    f"HPCC's INT cannot encode the {rate} bit/s links of this topology",
                    f"use link speeds among {', '.join(str(r // 10**9) for r in INT_LINE_RATES)} Gb/s",
                )
            if rate not in cfg.kmin_bytes:
                known = ", ".join(str(r) for r in sorted(cfg.kmin_bytes)) or "none"
                raise self.error(
                    ("config", "kmin_bytes") if overridden else ("host_bw_gbps",),
                    f"no ECN threshold for the topology's {rate} bit/s links (the ECN maps have {known})",
                    "set host_bw_gbps to the host link speed in Gb/s (presets cover it and 4x it), "
                    f"or give kmin_bytes, kmax_bytes and pmax entries for {rate} under config",
                )

    def config_value(self, key: str, value, path: tuple):
        kind = _CONFIG_TYPES[key]
        if key in _ECN_MAPS:
            value = self.mapping_any(value, path, "{link rate: value}")
            out = {}
            for rate, v in value.items():
                rate_bps = self.rate(rate, path + (str(rate),))
                out[rate_bps] = (
                    self.number(v, path + (str(rate),)) if key == "pmax" else self.integer(v, path + (str(rate),), 0)
                )
            return out
        if value is None and isinstance(kind, types.UnionType) and type(None) in kind.__args__:
            return None  # rto_ps: null means automatic
        if kind is bool:
            return self.boolean(value, path)
        if key == "rng":
            return self.choice(value, path, RNG_NAMES)
        if kind is float:
            return self.number(value, path)
        if key.endswith("_bps"):
            return self.rate(value, path)
        if key.endswith("_ps"):
            return self.time(value, path)
        return self.integer(value, path)

    def telemetry(self, spec, topo: Topology, n_flows: int) -> Telemetry:
        path = ("telemetry",)
        if spec is False or spec == "off":
            return Telemetry.off()
        if spec is True or spec == "on":
            return Telemetry()
        if not isinstance(spec, dict):
            raise self.error(
                path,
                f"must be off, on, or a mapping of Telemetry fields, got {kind_of(spec)}",
                f"fields: {', '.join(TELEMETRY_KEYS)}",
            )
        self.mapping(spec, path, "Telemetry fields")
        self.keys(spec, path, TELEMETRY_KEYS)
        args = {}
        for key, value in spec.items():
            sub = path + (key,)
            if key in ("interval_ps", "start_ps", "end_ps"):
                args[key] = None if key == "end_ps" and value is None else self.time(value, sub)
            elif key in ("enabled", "idle_samples"):
                args[key] = self.boolean(value, sub)
            elif key in ("ports", "flows"):
                args[key] = self.selection(value, sub, ("switch", "all") if key == "ports" else ("all",))
            else:
                args[key] = self.integer(value, sub, minimum=1)
        return Telemetry(**args)

    def wormhole(self, spec) -> WormholeConfig:
        """Wormhole-mode knobs: the memo (true: within the run, the default; false: off; or a DB file, relative to
        the scenario file) and the steady test's."""
        path = ("wormhole",)
        self.mapping(spec, path, "Wormhole settings")
        self.keys(spec, path, WORMHOLE_KEYS)
        steady = {}
        for key, value in spec.items():
            sub = path + (key,)
            if key == "theta":
                steady[key] = self.number(value, sub)
            elif key == "window":
                steady[key] = self.integer(value, sub, minimum=2)
            elif key in ("interval_ps", "min_skip_ps"):
                steady[key] = self.time(value, sub)
            elif key in ("line_window", "cycles"):
                steady[key] = self.integer(value, sub, minimum=0)
        counts = {k: self.integer(spec[k], path + (k,), minimum=0) for k in ("audit", "audit_windows") if k in spec}
        if "tail_packets" in spec:
            counts["tail_packets"] = self.integer(spec["tail_packets"], path + ("tail_packets",), minimum=1)
        memo = spec.get("memo", True)
        if memo is None:
            raise self.error(
                path + ("memo",), "has no value", "write false to turn memoization off, or a file to keep it in"
            )
        if not isinstance(memo, bool):
            memo = self.text(memo, path + ("memo",))
            memo = str(Path(memo) if Path(memo).is_absolute() else self.base / memo)
            if not Path(memo).parent.is_dir():
                raise self.error(path + ("memo",), f"folder of {memo} does not exist", "create it or change the path")
        try:
            return WormholeConfig(steady=SteadyConfig(**steady), memo=memo, **counts)
        except InputError as exc:
            field = exc.where.rsplit(".", 1)[-1]
            raise self.error(path + (field if field in WORMHOLE_KEYS else "theta",), exc.problem, exc.fix) from None

    def selection(self, value, path: tuple, named: tuple):
        if value is None:
            return None
        if isinstance(value, str):
            return self.choice(value, path, named)
        if isinstance(value, list):
            return [self.integer(v, path + (i,), minimum=0) for i, v in enumerate(value)]
        raise self.error(
            path,
            f"must be {' or '.join(map(repr, named))}, a list of ids, or null, got {kind_of(value)}",
            "e.g. 'all' or [0, 1, 2]",
        )

    def check_telemetry(self, scenario: Scenario) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the cap warning belongs to the run, not to loading
                scenario.telemetry.select(scenario.topology, len(scenario.flows), _min_interval_ps(scenario))
        except InputError as exc:
            field = exc.where.removeprefix("Telemetry.")
            raise self.error(("telemetry", field), exc.problem, exc.fix) from None
