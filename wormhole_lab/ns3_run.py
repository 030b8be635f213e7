"""Run a reference-style config.txt unchanged: read its topology and flows, write its fct/pfc outputs."""

import re
from pathlib import Path

from wormhole_lab.errors import InputError
from wormhole_lab.ns3_config import read_ns3_config
from wormhole_lab.results import check_writable, fct_lines, pfc_lines, write_lines
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.topology.hpcc_format import read_topology
from wormhole_lab.workload.hpcc_flow_format import flow_line, read_flows
from wormhole_lab.workload.validate import check_flows


def ns3_scenario(config_path) -> tuple[Scenario, object]:
    """The Scenario a reference config describes, plus the parsed config (for its output paths).

    Input and output paths are taken relative to the working directory, as the reference does."""
    cfg = read_ns3_config(config_path)
    topo = read_topology(Path(cfg.topology_file))
    flows = read_flows(Path(cfg.flow_file))
    try:
        check_flows(flows, topo, where="flows")
    except InputError as exc:  # name the flow file's line, not the row of a table the user never saw
        row = re.match(r"flows\[(\d+)\]", exc.where)
        where = f"{cfg.flow_file}:{flow_line(Path(cfg.flow_file), int(row.group(1)))}" if row else cfg.flow_file
        raise InputError(where, exc.problem, f"{exc.fix} (topology: {cfg.topology_file})") from None
    return Scenario(topo, flows, cfg.engine, name=str(config_path)), cfg


def run_ns3_config(config_path, mode: str = "packet"):
    """Returns (flows Dataset, [paths written])."""
    scenario, cfg = ns3_scenario(config_path)
    outputs = [Path(cfg.fct_output_file), Path(cfg.pfc_output_file)]
    for path, key in zip(outputs, ("FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE"), strict=True):
        check_writable(path, f"{config_path}: {key}")
    ds = Simulation(scenario, mode=mode).run()
    write_lines(outputs[0], fct_lines(ds))
    write_lines(outputs[1], pfc_lines(ds))
    return ds, outputs
