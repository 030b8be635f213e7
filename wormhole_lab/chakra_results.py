"""Per-rank results of a Chakra trace's run, and the lines ASTRA-sim prints.

A run of ``chakra_flows``'s table gets a ``rank`` dimension (int64 ns; -1 where a rank's flows did not all arrive):

- ``rank_finish``: when the rank's last node is done (ASTRA-sim's ``sys[i] finished, N cycles``; 1 cycle = 1 ns);
- ``rank_exposed_comm``: finish minus the compute the rank replays (ASTRA-sim's "exposed communication");
- ``rank_collective_time``, ``rank_p2p_time``, ``rank_compute_time``: time spanned by its collectives, its sends
  and receives, and its compute nodes, summed over nodes;
- ``rank_host``: the host each rank runs on;
- on a network read from an ASTRA-sim configuration, ``rank_analytical_finish``: ASTRA-sim's congestion-unaware
  answer for the same flows (``workload.astra_replay``), so that each run shows what the packet level adds.
"""

import numpy as np

from wormhole_lab.topology.astra_network import AstraDim, AstraNetwork
from wormhole_lab.workload.astra_replay import analytical_delivery, rank_times
from wormhole_lab.workload.chakra_flows import ChakraLayout

__all__ = ["add_rank_results", "analytical_times", "astra_lines", "astra_network_of"]

RANK_VARIABLES = {
    "finish": ("rank_finish", "when the rank's last node is done (ASTRA-sim: sys[i] finished, N cycles)"),
    "exposed_comm": ("rank_exposed_comm", "finish minus the rank's compute (ASTRA-sim: exposed communication)"),
    "collective": ("rank_collective_time", "time spanned by the rank's collectives, summed"),
    "p2p": ("rank_p2p_time", "time spanned by the rank's sends and receives, summed"),
    "compute": ("rank_compute_time", "time spanned by the rank's compute nodes, summed"),
}


def astra_network_of(topology) -> AstraNetwork | None:
    """The ASTRA-sim network a topology was built from (``astra_topology``), or None."""
    if topology.meta.get("builder") != "astra_network":
        return None
    return AstraNetwork(tuple(AstraDim(**d) for d in topology.meta["dims"]))


def analytical_times(flows, network: AstraNetwork) -> np.ndarray:
    """``astra_replay.analytical_delivery`` of ``flows`` on ``network``, replayed once per table and network and kept
    in ``flows.meta`` (the replay is Python: 4.5 s for 655,360 flows; a run needs it for its series and results)."""
    kept = flows.meta.setdefault("astra_analytical", {})
    if network.dims not in kept:
        kept[network.dims] = analytical_delivery(flows, network.message_ns)
    return kept[network.dims]


def delivery_times(data) -> np.ndarray:
    """int64 ps per flow: when its last byte arrived (-1: never), from a run's ``start`` and ``delivery_time``."""
    start, delivery = np.asarray(data["start"]), np.asarray(data["delivery_time"])
    return np.where((start >= 0) & (delivery >= 0), start + delivery, -1)


def add_rank_results(results, scenario):
    """The variables of the module docstring, added to ``results`` (a RunResults)."""
    layout: ChakraLayout = scenario.flows.meta["chakra"]
    times = rank_times(layout, delivery_times(results))
    results.coords["rank"] = ("rank", np.arange(layout.n_ranks), {"long_name": "Chakra trace rank (NPU)"})
    for key, (name, text) in RANK_VARIABLES.items():
        results[name] = ("rank", times[key], {"units": "ns", "long_name": text})
    results["rank_host"] = ("rank", np.asarray(layout.hosts), {"units": "", "long_name": "host the rank runs on"})
    network = astra_network_of(scenario.topology)
    if network is not None:
        analytical = rank_times(layout, analytical_times(scenario.flows, network))["finish"]
        results["rank_analytical_finish"] = ("rank", analytical, {
            "units": "ns", "long_name": "ASTRA-sim's congestion-unaware finish of the same flows (no contention, "
            "hops x latency + bytes / bandwidth per message)",
        })  # fmt: skip
    results.attrs["chakra_trace"] = layout.prefix
    results.attrs["astra_assumed"] = "; ".join(layout.assumed)
    return results


def astra_lines(ds) -> list[str]:
    """ASTRA-sim's per-rank lines (``sys[i] finished, T cycles, exposed communication E cycles.``), then the
    slowest rank beside ASTRA-sim's analytical answer when the run has one."""
    finish, exposed = np.asarray(ds["rank_finish"]), np.asarray(ds["rank_exposed_comm"])
    lines = [
        f"sys[{r}] finished, {t} cycles, exposed communication {e} cycles." if t >= 0 else f"sys[{r}] did not finish"
        for r, (t, e) in enumerate(zip(finish.tolist(), exposed.tolist(), strict=True))
    ]
    if "rank_analytical_finish" in ds and (finish >= 0).all():
        packet, analytical = int(finish.max()), int(np.asarray(ds["rank_analytical_finish"]).max())
        lines.append(
            f"slowest rank    {packet:,} ns here; ASTRA-sim analytical (congestion-unaware) {analytical:,} ns "
            f"({(packet - analytical) / analytical:+.2%})"
        )
    if ds.attrs.get("astra_assumed"):
        lines.append(f"assumed         {ds.attrs['astra_assumed']}")
    return lines
