"""Scenario files: a whole run (cluster, traffic, congestion control, telemetry) in one YAML file.

Format (full reference with examples: ``docs/scenario-format.md``)::

    name: incast-hpcc                 # optional, default: the file's stem
    description: 8-to-1 incast        # optional free text (kept in Scenario.meta["description"])
    topology:                         # required: a builder and its arguments ...
      builder: star                   #   fat_tree | star | dumbbell | leaf_spine | rail_optimized
      n_hosts: 9                      #   arguments of topology.builders.<builder>
      host_rate_bps: 100Gbps          #   *_bps: integer bit/s or a rate text; *_ps: integer ps or a time text
    # topology: {file: topology.txt}  # ... or an HPCC / SimAI topology file
    flows:                            # required, exactly one source:
      incast: {senders: [1, 2, 3], receiver: 0, size: 1000000}
    # flows: {file: flow.txt}                          HPCC flow file
    # flows: {htsim: traffic.cm, start_unit: us}       htsim connection matrix (start_unit: ps | ns | us)
    # flows: {permutation: {size: 1000000, seed: 1}}   every host sends to another, a random derangement
    cca: hp                           # required: a preset of engine.presets (run.py's --cc names)
    host_bw_gbps: 100                 # optional preset argument (default 100)
    hpai_mbps: 50                     # optional, hp only
    config:                           # optional EngineConfig overrides, by field name
      stop_time_ps: 10ms
    telemetry: off                    # optional: off | on | a mapping of Telemetry fields

Paths are relative to the YAML file. Every problem is an ``InputError`` located at ``<file>:<line>``
whose message names the key (``config.rate_ai_bps``) and whose fix lists the allowed keys or values,
with the closest match first ("did you mean 'topology'?").

``load_scenario(path)`` returns a checked ``Scenario`` (topology and flows are validated against each
other, the config and telemetry settings too). ``save_scenario(scenario, path)`` writes a YAML file that
loads back to equal topology arrays, flows and config: a topology made by a builder is stored as the
builder and its arguments (from ``Topology.meta``), any other one as an HPCC topology file next to the
YAML; flows from a generator are stored as the generator, flows read from an htsim file as a copy of that
file, other flows as an HPCC flow file (or a connection matrix in ps when their start times are not whole
nanoseconds) next to the YAML. The config is stored as the preset closest to it plus the fields that differ.
"""

import difflib
import inspect
import math
import re
import shutil
import types
import warnings
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import yaml

from wormhole_lab.engine.config import CCA_NAMES, INT_LINE_RATES, EngineConfig
from wormhole_lab.engine.presets import PRESETS, preset
from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Scenario, _min_interval_ps
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import dumbbell, fat_tree, leaf_spine, rail_optimized, star
from wormhole_lab.topology.hpcc_format import read_topology, write_topology
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.validate import check_topology
from wormhole_lab.units import parse_rate, parse_time_ps
from wormhole_lab.workload.flows import FlowTable, make_flows
from wormhole_lab.workload.hpcc_flow_format import read_flows, write_flows
from wormhole_lab.workload.htsim_cm import START_UNITS, read_cm, write_cm
from wormhole_lab.workload.llm import training_iteration
from wormhole_lab.workload.models import MODELS, get_model, placement_for
from wormhole_lab.workload.validate import check_flows

__all__ = ["BUILDERS", "FLOW_SOURCES", "TOP_LEVEL_KEYS", "load_scenario", "save_scenario", "scenario_from_dict"]

BUILDERS = {
    "fat_tree": fat_tree,
    "star": star,
    "dumbbell": dumbbell,
    "leaf_spine": leaf_spine,
    "rail_optimized": rail_optimized,
}
TOP_LEVEL_KEYS = ("name", "description", "topology", "flows", "cca", "host_bw_gbps", "hpai_mbps", "config", "telemetry")
REQUIRED_KEYS = ("topology", "flows", "cca")
FLOW_SOURCES = ("file", "htsim", "permutation", "incast", "training")
TRAINING_KEYS = ("model", "n_gpus", "micro_batches", "dp_buckets", "gpu_tflops", "efficiency")
TELEMETRY_KEYS = ("interval_ps", "ports", "flows", "chunk_samples", "max_ports", "max_flows", "enabled")
CONFIG_FIELDS = tuple(f.name for f in fields(EngineConfig) if f.name != "cca")
_CONFIG_TYPES = {f.name: f.type for f in fields(EngineConfig)}
_ECN_MAPS = ("kmin_bytes", "kmax_bytes", "pmax")
_NUMBER_TEXT = re.compile(r"^[+-]?(?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
_HEADER = "# wormhole_lab scenario (format: docs/scenario-format.md)\n"


# --- entry points ----------------------------------------------------------------------------------------------


def load_scenario(path) -> Scenario:
    """Read, validate and build the Scenario described by a YAML file (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"{path}:0", f"cannot read the scenario file ({exc.strerror})", "check the path and permissions"
        ) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"{path}:{line}", f"not valid YAML: {problem}", "fix the YAML syntax at this line") from None
    lines: dict[tuple, int] = {}
    if node is not None:
        _index_lines(node, (), lines, str(path))
    return _Loader(str(path), path.parent, lines).scenario(doc, default_name=path.stem)


def scenario_from_dict(doc: dict, base_dir=".", source: str = "<scenario>") -> Scenario:
    """Build a Scenario from an already-parsed document (same keys as the YAML file); errors name ``source``."""
    return _Loader(source, Path(base_dir), {}).scenario(doc, default_name="scenario")


def save_scenario(scenario: Scenario, path) -> Path:
    """Write ``scenario`` as a YAML file at ``path`` (plus side files next to it when needed).

    Reading it back with ``load_scenario`` gives equal topology arrays, flows and config; this is checked
    before returning. Returns the path of the YAML file.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise InputError("save_scenario(path)", f"folder {path.parent} does not exist", "create it first")
    wormhole = getattr(scenario, "wormhole", None)
    if wormhole is not None and wormhole != type(wormhole)():
        warnings.warn(
            "scenario files do not store Scenario.wormhole yet: the saved file loads with the default settings",
            UserWarning,
            stacklevel=2,
        )
    base, stem = path.parent, path.stem
    doc: dict = {"name": str(scenario.name)}
    if scenario.meta.get("description"):
        doc["description"] = str(scenario.meta["description"])
    doc["topology"] = _topology_doc(scenario.topology, base, stem)
    doc["flows"] = _flows_doc(scenario.flows, scenario.topology, base, stem)
    doc.update(_config_doc(scenario.config, scenario.meta.get("preset"), scenario.topology))
    telemetry = _telemetry_doc(scenario.telemetry)
    if telemetry is not None:
        doc["telemetry"] = telemetry
    text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, allow_unicode=True, width=100)
    path.write_text(_HEADER + text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # read_cm's approximation notes were given when the flows were first read
        back = load_scenario(path)
    for part, same in (
        ("topology", _same_topology(back.topology, scenario.topology)),
        ("flows", _same_flows(back.flows, scenario.flows)),
        ("config", back.config == scenario.config),
    ):
        if not same:
            raise InputError(
                f"save_scenario({path})",
                f"the {part} did not survive the round trip through {path.name}",
                "report this as a bug, with the scenario",
            )
    return path


# --- YAML line numbers -----------------------------------------------------------------------------------------


def _index_lines(node, prefix: tuple, out: dict, source: str) -> None:
    """Map every key path (``("config", "rp_timer_ps")``, ``("flows", "incast", "senders", 2)``) to its line."""
    out.setdefault(prefix, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                dotted = _dotted(prefix + (key,))
                raise InputError(
                    f"{source}:{line}", f"{dotted}: key given twice (first on line {seen[key]})", "keep one of them"
                )
            seen[key] = line
            out[prefix + (key,)] = line
            _index_lines(value_node, prefix + (key,), out, source)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, prefix + (i,), out, source)


def _dotted(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(document)"


def _kind(value) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, int | float):
        return f"{value!r} (a number)"
    if isinstance(value, str):
        return f"{value!r} (text)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"{value!r} ({type(value).__name__})"


def _allowed(word: str, allowed) -> str:
    allowed = [str(a) for a in allowed]
    close = difflib.get_close_matches(str(word), allowed, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{hint}allowed: {', '.join(allowed)}"


# --- loading ---------------------------------------------------------------------------------------------------


class _Loader:
    """Validates a parsed document section by section; every error names ``<file>:<line>`` and the key."""

    def __init__(self, source: str, base: Path, lines: dict):
        self.source = source
        self.base = base
        self.lines = lines

    # errors

    def error(self, path: tuple, problem: str, fix: str = "") -> InputError:
        line = next((self.lines[path[:k]] for k in range(len(path), -1, -1) if path[:k] in self.lines), 0)
        where = f"{self.source}:{line}" if self.lines else self.source
        return InputError(where, f"{_dotted(path)}: {problem}", fix)

    def rewrap(self, path: tuple, exc: InputError) -> InputError:
        return self.error(path, f"{exc.where}: {exc.problem}", exc.fix)

    # typed values

    def mapping(self, value, path: tuple, what: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(
                path,
                f"must be a mapping of {what}, got {_kind(value)}",
                f"write {_dotted(path)!r} as 'key: value' lines"
                if path
                else "write 'key: value' lines at the top level",
            )
        for key in value:
            if not isinstance(key, str):
                raise self.error(path + (str(key),), f"key {key!r} is not a name", f"use one of the keys of {what}")
        return value

    def keys(self, mapping: dict, path: tuple, allowed, required=()) -> None:
        for key in mapping:
            if key not in allowed:
                raise self.error(path + (key,), f"unknown key {key!r}", _allowed(key, allowed))
        for key in required:
            if key not in mapping:
                raise self.error(
                    path, f"missing required key {key!r}", f"add '{key}:' (keys here: {', '.join(allowed)})"
                )

    def integer(self, value, path: tuple, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.error(path, f"must be an integer, got {_kind(value)}", "write a whole number such as 1000000")
        if isinstance(value, str):
            hint = "write a whole number such as 1000000"
            if _NUMBER_TEXT.match(value.strip()):
                hint = f"YAML reads {value!r} as text; write it as digits, e.g. 1000000 or 1_000_000"
            raise self.error(path, f"must be an integer, got {_kind(value)}", hint)
        if isinstance(value, float):
            if not (math.isfinite(value) and value.is_integer()):
                raise self.error(path, f"must be an integer, got {_kind(value)}", "write a whole number")
            value = int(value)
        if minimum is not None and value < minimum:
            raise self.error(path, f"must be at least {minimum}, got {value}", f"use a value >= {minimum}")
        return value

    def number(self, value, path: tuple) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(path, f"must be a number, got {_kind(value)}", "write a number such as 0.95")
        return float(value)

    def boolean(self, value, path: tuple) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"must be true or false, got {_kind(value)}", "write true or false")
        return value

    def text(self, value, path: tuple) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"must be text, got {_kind(value)}", "write a string (quote it if needed)")
        return value

    def choice(self, value, path: tuple, allowed) -> str:
        value = self.text(value, path)
        if value not in allowed:
            raise self.error(path, f"unknown value {value!r}", _allowed(value, allowed))
        return value

    def rate(self, value, path: tuple) -> int:
        if isinstance(value, str):
            try:
                return parse_rate(value, _dotted(path))
            except InputError as exc:
                raise self.error(path, exc.problem, exc.fix) from None
        v = self.integer(value, path)
        if v <= 0:
            raise self.error(path, f"rate must be positive, got {v}", "write bit/s such as 100000000000 or 100Gbps")
        return v

    def time(self, value, path: tuple) -> int:
        if isinstance(value, str):
            try:
                return parse_time_ps(value, _dotted(path))
            except InputError as exc:
                raise self.error(path, exc.problem, exc.fix) from None
        return self.integer(value, path, minimum=0)

    def file(self, value, path: tuple) -> Path:
        name = self.text(value, path)
        target = Path(name) if Path(name).is_absolute() else self.base / name
        if not target.is_file():
            raise self.error(
                path, f"file {name!r} not found (looked for {target})", "paths are relative to the YAML file"
            )
        return target

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
        flows = self.flows(doc["flows"], topo)
        config, preset_args = self.config(doc)
        self.check_ecn(config, topo, doc)
        meta["preset"] = preset_args
        telemetry = self.telemetry(doc.get("telemetry", True), topo, len(flows))
        scenario = Scenario(topo, flows, config, name=name, telemetry=telemetry, meta=meta)
        if telemetry.enabled:
            self.check_telemetry(scenario)
        return scenario

    def topology(self, spec) -> Topology:
        path = ("topology",)
        spec = self.mapping(spec, path, "'builder' and its arguments, or 'file'")
        if "file" in spec:
            self.keys(spec, path, ("file",))
            return read_topology(self.file(spec["file"], path + ("file",)))  # errors name the topology file's line
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
                raise self.error(path + (key,), f"{name} has no argument {key!r}", _allowed(key, params))
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
                if key not in FLOW_SOURCES and key != "start_unit":
                    raise self.error(path + (key,), f"unknown flow source {key!r}", _allowed(key, FLOW_SOURCES))
            problem = "names no flow source" if not sources else f"names {len(sources)} sources ({', '.join(sources)})"
            raise self.error(path, problem, f"give exactly one of {', '.join(FLOW_SOURCES)}")
        kind = sources[0]
        self.keys(spec, path, (kind, "start_unit") if kind == "htsim" else (kind,))
        sub = path + (kind,)
        if kind == "file":
            flows = read_flows(self.file(spec["file"], sub))
        elif kind == "htsim":
            unit = self.choice(spec.get("start_unit", "us"), path + ("start_unit",), START_UNITS)
            flows = read_cm(self.file(spec["htsim"], sub), start_unit=unit)
        elif kind == "permutation":
            args = self.mapping(spec[kind], sub, "'size' and 'seed'")
            self.keys(args, sub, ("size", "seed"), ("size",))
            size = self.integer(args["size"], sub + ("size",), minimum=1)
            seed = self.integer(args.get("seed", 1), sub + ("seed",), minimum=0)
            if len(topo.hosts) < 2:
                raise self.error(sub, "a permutation needs at least 2 hosts", "use a topology with more hosts")
            flows = _permutation(topo, size, seed)
        elif kind == "training":
            args = self.mapping(spec[kind], sub, "'model' and optional 'n_gpus', 'micro_batches', ...")
            self.keys(args, sub, TRAINING_KEYS, ("model",))
            model = self.choice(args["model"], sub + ("model",), tuple(MODELS))
            values = {"model": model, "n_gpus": self.integer(args.get("n_gpus", len(topo.hosts)), sub + ("n_gpus",), 1)}
            for key in ("micro_batches", "dp_buckets"):
                if key in args:
                    values[key] = self.integer(args[key], sub + (key,), minimum=1)
            for key in ("gpu_tflops", "efficiency"):
                if key in args:
                    values[key] = self.number(args[key], sub + (key,))
            try:
                flows = _training(topo, values)
            except InputError as exc:
                raise self.rewrap(sub, exc) from None
        else:
            args = self.mapping(spec[kind], sub, "'senders', 'receiver' and 'size'")
            self.keys(args, sub, ("senders", "receiver", "size"), ("senders", "receiver", "size"))
            senders = args["senders"]
            if not isinstance(senders, list) or not senders:
                raise self.error(
                    sub + ("senders",), f"must be a non-empty list of host ids, got {_kind(senders)}", "e.g. [1, 2, 3]"
                )
            senders = [self.host(s, sub + ("senders", i), topo) for i, s in enumerate(senders)]
            if len(set(senders)) != len(senders):
                dup = next(s for s in senders if senders.count(s) > 1)
                raise self.error(sub + ("senders",), f"host {dup} is listed twice", "list each sender once")
            receiver = self.host(args["receiver"], sub + ("receiver",), topo)
            if receiver in senders:
                raise self.error(sub + ("receiver",), f"host {receiver} is also a sender", "remove it from senders")
            size = self.integer(args["size"], sub + ("size",), minimum=1)
            flows = _incast(senders, receiver, size)
        try:
            check_flows(flows, topo, where="flows")
        except InputError as exc:
            raise self.rewrap(sub, exc) from None
        return flows

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
                raise self.error(path, f"unknown EngineConfig field {key!r}", _allowed(key, CONFIG_FIELDS))
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
        if kind is float:
            return self.number(value, path)
        if key.endswith("_bps"):
            return self.rate(value, path)
        if key.endswith("_ps"):
            return self.time(value, path)
        return self.integer(value, path)

    def mapping_any(self, value, path: tuple, what: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(path, f"must be a mapping {what}, got {_kind(value)}", "e.g. {100000000000: 400000}")
        return value

    def telemetry(self, spec, topo: Topology, n_flows: int) -> Telemetry:
        path = ("telemetry",)
        if spec is False or spec == "off":
            return Telemetry.off()
        if spec is True or spec == "on":
            return Telemetry()
        if not isinstance(spec, dict):
            raise self.error(
                path,
                f"must be off, on, or a mapping of Telemetry fields, got {_kind(spec)}",
                f"fields: {', '.join(TELEMETRY_KEYS)}",
            )
        self.mapping(spec, path, "Telemetry fields")
        self.keys(spec, path, TELEMETRY_KEYS)
        args = {}
        for key, value in spec.items():
            sub = path + (key,)
            if key == "interval_ps":
                args[key] = self.time(value, sub)
            elif key == "enabled":
                args[key] = self.boolean(value, sub)
            elif key in ("ports", "flows"):
                args[key] = self.selection(value, sub, ("switch", "all") if key == "ports" else ("all",))
            else:
                args[key] = self.integer(value, sub, minimum=1)
        return Telemetry(**args)

    def selection(self, value, path: tuple, named: tuple):
        if value is None:
            return None
        if isinstance(value, str):
            return self.choice(value, path, named)
        if isinstance(value, list):
            return [self.integer(v, path + (i,), minimum=0) for i, v in enumerate(value)]
        raise self.error(
            path,
            f"must be {' or '.join(map(repr, named))}, a list of ids, or null, got {_kind(value)}",
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


# --- generators ------------------------------------------------------------------------------------------------


def _permutation(topo: Topology, size: int, seed: int) -> FlowTable:
    """Every host sends ``size`` bytes at t=0 to another host: a random derangement drawn from ``seed``
    (redrawn until no host sends to itself), the same draw as ``scenarios.fat_tree_permutation``."""
    hosts = topo.hosts
    rng = np.random.default_rng(seed)
    while True:
        dst = rng.permutation(hosts)
        if not np.any(dst == hosts):
            break
    flows = make_flows(hosts, dst, np.full(len(hosts), size), 0)
    return replace(flows, meta={"generator": {"permutation": {"size": int(size), "seed": int(seed)}}})


def _incast(senders: list[int], receiver: int, size: int) -> FlowTable:
    """Each sender sends ``size`` bytes to ``receiver`` at t=0, in the order listed."""
    n = len(senders)
    flows = make_flows(senders, [receiver] * n, [size] * n, 0)
    spec = {"senders": [int(s) for s in senders], "receiver": int(receiver), "size": int(size)}
    return replace(flows, meta={"generator": {"incast": spec}})


def _training(topo: Topology, values: dict) -> FlowTable:
    """One training iteration of a Table 1 preset on ``topo``'s GPUs (``workload.llm``)."""
    if values["n_gpus"] != len(topo.hosts):
        raise InputError(
            "flows.training.n_gpus",
            f"{values['n_gpus']} GPUs but the topology has {len(topo.hosts)} hosts",
            "use a rail_optimized topology with one host per GPU",
        )
    placement = placement_for(values["model"], values["n_gpus"], int(topo.meta.get("gpus_per_server", 8)))
    options = {k: values[k] for k in ("micro_batches", "dp_buckets", "gpu_tflops", "efficiency") if k in values}
    flows = training_iteration(get_model(values["model"]), placement, **options)
    return replace(flows, meta={"generator": {"training": dict(values)}})


def _generate(spec: dict, topo: Topology) -> FlowTable | None:
    try:
        ((kind, args),) = spec.items()
        if kind == "training":
            return _training(topo, args)
        if kind == "permutation":
            return _permutation(topo, args["size"], args["seed"])
        if kind == "incast":
            return _incast(args["senders"], args["receiver"], args["size"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


# --- saving ----------------------------------------------------------------------------------------------------


def _plain(value):
    """numpy scalars and tuples as plain Python values YAML can write."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list | np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value


def _same_topology(a: Topology, b: Topology) -> bool:
    names = ("is_switch", "link_a", "link_b", "link_rate_bps", "link_delay_ps", "link_error_rate")
    return all(np.array_equal(getattr(a, n), getattr(b, n)) for n in names)


def _same_flows(a: FlowTable, b: FlowTable) -> bool:
    names = ("src", "dst", "size", "start_ps", "pg", "dport", "sport", "dep_offset", "dep_ids", "gap_ps", "phase")
    return (
        len(a) == len(b) and a.tail_ps == b.tail_ps and all(np.array_equal(getattr(a, n), getattr(b, n)) for n in names)
    )


def _topology_doc(topo: Topology, base: Path, stem: str) -> dict:
    name = topo.meta.get("builder")
    if name in BUILDERS:
        params = inspect.signature(BUILDERS[name]).parameters
        args = {k: _plain(topo.meta[k]) for k in params if k in topo.meta}
        try:
            rebuilt = BUILDERS[name](**args)
        except (InputError, TypeError):
            rebuilt = None
        if rebuilt is not None and _same_topology(rebuilt, topo):
            return {"builder": name, **{k: v for k, v in args.items() if v != params[k].default}}
    check_topology(topo, where=f"save_scenario: topology {topo.name}")
    file_name = f"{stem}.topology.txt"
    write_topology(topo, base / file_name)
    return {"file": file_name}


def _flows_doc(flows: FlowTable, topo: Topology, base: Path, stem: str) -> dict:
    spec = flows.meta.get("generator")
    if isinstance(spec, dict):
        again = _generate(spec, topo)
        if again is not None and _same_flows(again, flows):
            return _plain(spec)
    if flows.meta.get("format") == "htsim_cm":
        source, unit = Path(str(flows.meta.get("source", ""))), flows.meta.get("start_unit", "us")
        if source.is_file() and unit in START_UNITS:
            target = base / f"{stem}.cm"
            if not (target.exists() and target.resolve() == source.resolve()):
                shutil.copyfile(source, target)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                again = read_cm(target, start_unit=unit)
            if _same_flows(again, flows):
                return {"htsim": target.name, "start_unit": unit}
    plain = (
        not flows.has_dependencies and not np.any(flows.gap_ps) and not flows.tail_ps and not np.any(flows.phase != "")
    )
    if not plain:
        raise InputError(
            "save_scenario: flows",
            "flows with dependencies, compute gaps or phase labels can only be saved when they were read from an "
            "htsim file that still exists (HPCC flow files cannot hold dependencies)",
            "keep the dependent traffic in a .cm file and load it with 'flows: {htsim: file.cm}'",
        )
    start = np.asarray(flows.start_ps)
    if np.all(start % 1000 == 0) and np.all(np.diff(start) >= 0):
        file_name = f"{stem}.flows.txt"
        write_flows(flows, base / file_name)
        if _same_flows(read_flows(base / file_name), flows):
            return {"file": file_name}
        (base / file_name).unlink()  # the reader's clock rounding would move some start times
    # starts an HPCC flow file cannot hold exactly (unsorted, or off its clock): a connection matrix in ps can
    file_name = f"{stem}.cm"
    try:
        hosts = topo.hosts  # htsim's Nodes counts hosts; ours come first whenever a builder made the topology
        nodes = len(hosts) if np.array_equal(hosts, np.arange(len(hosts))) else topo.n_nodes
        write_cm(flows, base / file_name, start_unit="ps", nodes=nodes)
    except InputError as exc:
        raise InputError(
            "save_scenario: flows",
            f"the start times need a connection matrix (ps), which cannot hold these flows: {exc.where}: {exc.problem}",
            exc.fix,
        ) from None
    return {"htsim": file_name, "start_unit": "ps"}


def _config_doc(cfg: EngineConfig, stored: dict | None, topo: Topology) -> dict:
    """The preset closest to ``cfg`` (fewest differing fields) and the fields that differ from it."""
    candidates = []
    if isinstance(stored, dict) and stored.get("name") in PRESETS:
        candidates.append((stored["name"], stored.get("host_bw_gbps", 100), stored.get("hpai_mbps")))
    host_links = ~topo.is_switch[topo.link_a] | ~topo.is_switch[topo.link_b]
    bws = [100]
    if host_links.any():
        rate = int(topo.link_rate_bps[host_links].max())
        if rate % 10**9 == 0:
            bws.insert(0, rate // 10**9)
    for name in PRESETS:
        for bw in bws:
            candidates.append((name, bw, None))
    best = None
    for name, bw, hpai in candidates:
        try:
            base = preset(name, host_bw_gbps=bw, hpai_mbps=hpai)
        except InputError:
            continue
        if base.cca != cfg.cca:
            continue
        diff = {f: getattr(cfg, f) for f in CONFIG_FIELDS if getattr(cfg, f) != getattr(base, f)}
        if best is None or len(diff) < len(best[3]):
            best = (name, bw, hpai, diff)
    if best is None:  # unreachable while every CCA has a preset
        raise InputError("save_scenario: config", f"no preset runs {cfg.cca!r}", f"use one of {', '.join(CCA_NAMES)}")
    name, bw, hpai, diff = best
    doc: dict = {"cca": name, "host_bw_gbps": int(bw)}
    if hpai is not None:
        doc["hpai_mbps"] = int(hpai)
    if diff:
        doc["config"] = _plain(diff)
    return doc


def _telemetry_doc(tel: Telemetry):
    if not tel.enabled:
        return "off"
    default = Telemetry()
    out = {}
    for name in TELEMETRY_KEYS:
        value = getattr(tel, name)
        if isinstance(value, str) or value is None:
            if value != getattr(default, name):
                out[name] = value
            continue
        if name in ("ports", "flows"):
            out[name] = [int(v) for v in value]
        elif value != getattr(default, name):
            out[name] = _plain(value)
    return out or None
