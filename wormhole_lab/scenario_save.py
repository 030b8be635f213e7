"""Writing a Scenario as a scenario YAML file (the format is documented in ``scenario_io`` and
docs/scenario-format.md). What a file cannot express exactly goes to side files next to it."""

import inspect
import os
import shutil
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

from wormhole_lab.engine.config import CCA_NAMES, EngineConfig
from wormhole_lab.engine.presets import PRESETS, preset
from wormhole_lab.errors import InputError
from wormhole_lab.scenario_io import BUILDERS, CONFIG_FIELDS, TELEMETRY_KEYS, load_scenario
from wormhole_lab.simulation import Scenario
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.hpcc_format import write_topology
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.validate import check_topology
from wormhole_lab.workload.flows import FlowTable
from wormhole_lab.workload.generators import regenerate
from wormhole_lab.workload.hpcc_flow_format import read_flows, write_flows
from wormhole_lab.workload.htsim_cm import START_UNITS, read_cm, write_cm
from wormhole_lab.workload.jobs import Background, FlowFile, Job, SimaiFile, Training
from wormhole_lab.workload.simai import read_simai, simai_flows
from wormhole_lab.workload.size_cdfs import NAMED_CDFS, size_cdf
from wormhole_lab.workload.traffic_gen import poisson_on_topology
from wormhole_lab.wormhole.settings import WormholeConfig
from wormhole_lab.wormhole.steady import SteadyConfig

_HEADER = "# wormhole_lab scenario (format: docs/scenario-format.md)\n"


def save_scenario(scenario: Scenario, path) -> Path:
    """Write ``scenario`` as a YAML file at ``path`` (plus side files next to it when needed).

    Reading it back with ``load_scenario`` gives equal topology arrays, flows and config; this is checked
    before returning. Returns the path of the YAML file.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise InputError("save_scenario(path)", f"folder {path.parent} does not exist", "create it first")
    base, stem = path.parent, path.stem
    doc: dict = {"name": str(scenario.name)}
    if scenario.meta.get("description"):
        doc["description"] = str(scenario.meta["description"])
    doc["topology"] = _topology_doc(scenario.topology, base, stem)
    if "jobs" in scenario.flows.meta:
        doc["jobs"] = [_job_doc(p.job, base) for p in scenario.flows.meta["jobs"].jobs]
        if scenario.alone_mode != "wormhole":
            doc["alone"] = scenario.alone_mode
    else:
        doc["flows"] = _flows_doc(scenario.flows, scenario.topology, base, stem)
    doc.update(_config_doc(scenario.config, scenario.meta.get("preset"), scenario.topology))
    telemetry = _telemetry_doc(scenario.telemetry)
    if telemetry is None and "jobs" in doc:  # the default settings, which a file of jobs has only when it says so
        telemetry = "on"
    if telemetry is not None:
        doc["telemetry"] = telemetry
    wormhole = _wormhole_doc(scenario.wormhole, base)
    if wormhole:
        doc["wormhole"] = wormhole
    text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, allow_unicode=True, width=100)
    path.write_text(_HEADER + text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # read_cm's approximation notes were given when the flows were first read
        back = load_scenario(path)
    for part, same in (
        ("topology", _same_topology(back.topology, scenario.topology)),
        ("flows", _same_flows(back.flows, scenario.flows)),
        ("config", back.config == scenario.config),
        ("alone mode", back.alone_mode == scenario.alone_mode),
        (
            "wormhole settings",
            back.wormhole.memo_kind == scenario.wormhole.memo_kind
            and replace(back.wormhole, memo=True) == replace(scenario.wormhole, memo=True),
        ),
    ):
        if not same:
            raise InputError(
                f"save_scenario({path})",
                f"the {part} did not survive the round trip through {path.name}",
                "report this as a bug, with the scenario",
            )
    return path


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
    if isinstance(spec, dict) and isinstance(spec.get("poisson"), dict):
        doc = _poisson_doc(spec["poisson"], flows, topo, base)
        if doc is not None:
            return doc
    elif isinstance(spec, dict):
        again = regenerate(spec, topo)
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
    if flows.meta.get("workload") == "simai" and flows.meta.get("chunk_bytes") is None:
        source, tp_traffic = Path(str(flows.meta.get("source", ""))), bool(flows.meta.get("tp_traffic"))
        # referenced where it is, never copied: SimAI workloads are third-party files
        if source.is_file() and _same_flows(simai_flows(read_simai(source), topo, tp_traffic=tp_traffic), flows):
            return {"simai": _relative(source, base), "tp_traffic": tp_traffic}
    plain = (
        not flows.has_dependencies and not np.any(flows.gap_ps) and not flows.tail_ps and not np.any(flows.phase != "")
    )
    if not plain:
        raise InputError(
            "save_scenario: flows",
            "flows with dependencies, compute gaps or phase labels can only be saved when they were read from an "
            "htsim or SimAI file that still exists (HPCC flow files cannot hold dependencies)",
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


def _relative(path, base: Path) -> str:
    """A side file referenced where it is, never copied (workloads and CDFs may be third-party files)."""
    return os.path.relpath(Path(path).resolve(), base.resolve())


def _job_doc(job: Job, base: Path) -> dict:
    """One entry of ``jobs:``: its name, its workload, and what differs from the defaults."""
    doc: dict = {"name": job.name}
    w = job.workload
    if isinstance(w, Training):
        doc["training"] = {"model": w.model, **({"n_gpus": w.n_gpus} if w.n_gpus is not None else {}), **w.options}
        if w.scale != 1:
            doc["training"]["scale"] = w.scale
    elif isinstance(w, SimaiFile):
        doc["simai"] = _relative(w.path, base)
        if w.tp_traffic:
            doc["tp_traffic"] = True
    elif isinstance(w, FlowFile):
        doc["file"] = _relative(w.path, base)
    else:
        cdf = w.cdf if w.cdf in NAMED_CDFS and not Path(w.cdf).is_file() else _relative(w.cdf, base)
        doc["poisson"] = {"cdf": cdf, "load": w.load, "duration": _time_text(w.duration_ps), "seed": w.seed}
    if isinstance(w, FlowFile | Background) and w.n_gpus is not None:
        doc["n_gpus"] = w.n_gpus
    defaults = Job(job.name, w)
    doc["placement"] = job.placement if isinstance(job.placement, str) else [int(h) for h in job.placement]
    for key, attr in (("seed", "seed"), ("iterations", "iterations"), ("shares_gpus", "shares_gpus")):
        if getattr(job, attr) != getattr(defaults, attr):
            doc[key] = _plain(getattr(job, attr))
    if job.start_ps:
        doc["start"] = _time_text(int(job.start_ps))
    return doc


def _poisson_doc(recipe: dict, flows: FlowTable, topo: Topology, base: Path) -> dict | None:
    """The poisson recipe, its CDF file referenced where it is (like a SimAI workload, never copied), when
    regenerating it gives these flows; else None (the flows are then saved as a flow file)."""
    try:
        cdf = Path(str(recipe["cdf"]))
        named = str(recipe["cdf"]) in NAMED_CDFS and not cdf.is_file()
        args = {k: recipe[k] for k in ("load", "duration_ps", "seed", "base_time_ps", "like_reference")}
        if not (cdf.is_file() or named):
            return None
        again = poisson_on_topology(topo, size_cdf(str(cdf)), **args)
    except (KeyError, TypeError, ValueError, InputError):
        return None
    if not _same_flows(again, flows):
        return None
    doc = {
        "cdf": str(cdf) if named else _relative(cdf, base),
        "load": float(args["load"]),
        "duration": _time_text(int(args["duration_ps"])),
    }
    doc["seed"] = int(args["seed"])
    if args["base_time_ps"]:
        doc["base_time"] = _time_text(int(args["base_time_ps"]))
    if args["like_reference"]:
        doc["like_reference"] = True
    return {"poisson": doc}


def _time_text(ps: int) -> str:
    """A time in the largest unit that holds it exactly: 5_000_000_000 -> '5ms'."""
    for unit, scale in (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps % scale == 0:
            return f"{ps // scale}{unit}"
    return f"{ps}ps"


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


def _wormhole_doc(wormhole: WormholeConfig, base: Path) -> dict:
    """The memo DB (relative to the YAML file when it can be), and the audit, tail and steady-test knobs that differ."""
    default = SteadyConfig()
    out = {
        name: _plain(getattr(wormhole.steady, name))
        for name in ("theta", "window", "interval_ps", "min_skip_ps", "line_window", "cycles")
        if getattr(wormhole.steady, name) != getattr(default, name)
    }
    if wormhole.memo_kind == "off":
        out["memo"] = False
    elif wormhole.memo_kind == "file":
        memo = Path(wormhole.memo).resolve()
        out["memo"] = str(memo.relative_to(base.resolve())) if memo.is_relative_to(base.resolve()) else str(memo)
    plain = WormholeConfig()
    out |= {
        k: int(getattr(wormhole, k))
        for k in ("audit", "audit_windows", "tail_packets")
        if getattr(wormhole, k) != getattr(plain, k)
    }
    return out


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
