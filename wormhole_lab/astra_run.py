"""ASTRA-sim's command line on this simulator: its workload, system, network and memory configurations in,
its per-rank answers out, from a packet-level (or Wormhole) run of the network it describes.

``astra_scenario`` builds the Scenario: the network YAML becomes a Topology (``topology.astra_network``), the
Chakra trace the flows ASTRA-sim's system layer would send (``workload.chakra_flows``). Link rates carry
ASTRA-sim's bandwidth as message bytes per second, so headers ride on top (``wire_per_payload``); each link rate
gets the ECN thresholds the reference's run.py gives its bandwidth (in whole Gb/s).
"""

from dataclasses import replace
from pathlib import Path

from wormhole_lab.chakra_results import analytical_times
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.state import DATA_HEADER_BYTES
from wormhole_lab.errors import InputError, read_json_file
from wormhole_lab.simulation import Scenario
from wormhole_lab.telemetry import DEFAULT_INTERVAL_PS, Telemetry
from wormhole_lab.topology.astra_network import astra_topology, read_astra_network
from wormhole_lab.workload.astra_replay import rank_times
from wormhole_lab.workload.astra_system import read_astra_system, read_comm_groups
from wormhole_lab.workload.chakra import read_chakra
from wormhole_lab.workload.chakra_flows import chakra_flows

__all__ = ["astra_scenario", "astra_wire_per_payload", "check_remote_memory", "with_link_ecn"]


def check_remote_memory(path) -> None:
    """ASTRA-sim's remote-memory configuration: only ``NO_MEMORY_EXPANSION`` (what every sample uses) is modelled."""
    raw = read_json_file(Path(path), "remote-memory configuration", '{"memory-type": "NO_MEMORY_EXPANSION"}')
    kind = raw.get("memory-type") if isinstance(raw, dict) else None
    if kind != "NO_MEMORY_EXPANSION":
        raise InputError(f"{path}:1 memory-type", f"{kind!r} is not modelled (no remote memory traffic is simulated)",
                         'use {"memory-type": "NO_MEMORY_EXPANSION"}')  # fmt: skip


def astra_wire_per_payload(payload_bytes: int) -> float:
    """Wire bytes per message byte: links run this much faster than ASTRA-sim's bandwidth, which counts message
    bytes only, so that messages move at ASTRA-sim's rate and headers ride on top."""
    return (payload_bytes + DATA_HEADER_BYTES) / payload_bytes


def with_link_ecn(config, topology):
    """``config`` with every link rate's ECN thresholds as the reference's run.py gives them at that rate's whole
    Gb/s (its maps hold only bw and 4 x bw; an ASTRA-sim network's rates are seldom those), and packets timed in
    ps: ASTRA-sim times serialisation in floating point, and the reference's whole-ns clock would make a 450 Gb/s
    link 3.4 % faster than its rate (a 1048 B packet takes 18.63 ns, truncated to 18)."""
    kmin, kmax, pmax = {}, {}, {}
    for rate in sorted({int(r) for r in topology.link_rate_bps}):
        gbps = max(4, rate // 10**9)
        at = preset("dctcp" if config.cca == "dctcp" else "dcqcn", host_bw_gbps=gbps)  # the ECN maps of run.py
        kmin[rate], kmax[rate], pmax[rate] = (
            at.kmin_bytes[gbps * 10**9],
            at.kmax_bytes[gbps * 10**9],
            at.pmax[gbps * 10**9],
        )
    return replace(config, kmin_bytes=kmin, kmax_bytes=kmax, pmax=pmax, time_quantum_ps=1)


def astra_config(topology, cca: str):
    """``preset(cca)`` at the fastest host link's whole Gb/s, with ``with_link_ecn``."""
    host_gbps = max(4, int(topology.link_rate_bps[: len(topology.hosts)].max()) // 10**9)
    try:
        config = preset(cca, host_bw_gbps=host_gbps)
    except InputError as exc:
        raise InputError("--cc", exc.problem, exc.fix) from None
    return with_link_ecn(config, topology)


def astra_scenario(workload, system, network, comm_groups=None, cca: str = "dcqcn") -> Scenario:
    """The Scenario of an ASTRA-sim run: ``workload`` the trace prefix (``DIR/NAME`` of ``DIR/NAME.N.et``),
    ``system``/``network`` ASTRA-sim's JSON and YAML, ``comm_groups`` the optional comm-group JSON."""
    net = read_astra_network(Path(network))
    sys_config = read_astra_system(Path(system))
    trace = read_chakra(workload)
    groups = read_comm_groups(comm_groups) if comm_groups else None
    topology = astra_topology(net, wire_per_payload=astra_wire_per_payload(preset("dcqcn").payload_bytes))
    flows = chakra_flows(trace, sys_config, list(range(net.n_npus)), dims=[d.npus for d in net.dims],
                         comm_groups=groups)  # fmt: skip
    config = astra_config(topology, cca)
    return Scenario(topology, flows, config, name=f"{Path(workload).name} on {topology.name}",
                    telemetry=astra_telemetry(flows, net))  # fmt: skip


SERIES_SAMPLES = 2000  # samples over the whole run in the default series


def astra_telemetry(flows, network) -> Telemetry:
    """Every switch port's series, about SERIES_SAMPLES samples over the run's length as ASTRA-sim's model
    foresees it, and no per-flow series: a trace has many short flows (1,024 ranks: 655,360), whose series
    would be mostly empty and, joined onto the flow table, as large as flows x samples."""
    foreseen = rank_times(flows.meta["chakra"], analytical_times(flows, network))["finish"].max()
    return Telemetry(interval_ps=max(DEFAULT_INTERVAL_PS, int(foreseen) * 1000 // SERIES_SAMPLES), flows=None)
