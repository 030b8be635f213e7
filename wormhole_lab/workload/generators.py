"""Flow tables generated from a few parameters; each remembers how it was made (``meta["generator"]``),
so a scenario file can store the recipe instead of the flows."""

from dataclasses import replace

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.flows import FlowTable, make_flows
from wormhole_lab.workload.llm import training_iteration
from wormhole_lab.workload.models import get_model, placement_for

TRAINING_OPTIONS = ("micro_batches", "dp_buckets", "gpu_tflops", "efficiency")


def permutation(topo: Topology, size: int, seed: int = 1) -> FlowTable:
    """Every host sends ``size`` bytes at t=0 to another host: a random derangement drawn from ``seed``
    (redrawn until no host sends to itself)."""
    hosts = topo.hosts
    rng = np.random.default_rng(seed)
    while True:
        dst = rng.permutation(hosts)
        if not np.any(dst == hosts):
            break
    flows = make_flows(hosts, dst, np.full(len(hosts), size), 0)
    return replace(flows, meta={"generator": {"permutation": {"size": int(size), "seed": int(seed)}}})


def incast(senders: list[int], receiver: int, size: int) -> FlowTable:
    """Each sender sends ``size`` bytes to ``receiver`` at t=0, in the order listed."""
    n = len(senders)
    flows = make_flows(senders, [receiver] * n, [size] * n, 0)
    spec = {"senders": [int(s) for s in senders], "receiver": int(receiver), "size": int(size)}
    return replace(flows, meta={"generator": {"incast": spec}})


def training(topo: Topology, model: str, n_gpus: int | None = None, **options) -> FlowTable:
    """One training iteration of a Table 1 preset on ``topo``'s GPUs (one host per GPU)."""
    n_gpus = len(topo.hosts) if n_gpus is None else n_gpus
    if n_gpus != len(topo.hosts):
        raise InputError(
            "flows.training.n_gpus",
            f"{n_gpus} GPUs but the topology has {len(topo.hosts)} hosts",
            "use a rail_optimized topology with one host per GPU",
        )
    placement = placement_for(model, n_gpus, int(topo.meta.get("gpus_per_server", 8)))
    flows = training_iteration(get_model(model), placement, **options)
    return replace(flows, meta={"generator": {"training": {"model": model, "n_gpus": n_gpus, **options}}})


def regenerate(spec: dict, topo: Topology) -> FlowTable | None:
    """The flows a stored recipe describes, or None when it is not a recipe this module knows."""
    try:
        ((kind, args),) = spec.items()
        if kind == "permutation":
            return permutation(topo, args["size"], args["seed"])
        if kind == "incast":
            return incast(args["senders"], args["receiver"], args["size"])
        if kind == "training":
            return training(topo, **args)
    except (ValueError, KeyError, TypeError, AttributeError, InputError):
        return None
    return None
