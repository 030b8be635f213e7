"""One training iteration of a model preset as dependent flows: 1F1B pipeline, then DP all-reduce.

Each pipeline stage runs Megatron's 1F1B schedule over ``micro_batches`` (default PP, as the
paper's global batch DP*PP with micro-batch 1 gives): ``PP-p-1`` warm-up forwards, then alternating
forward/backward, then the cool-down backwards. Per micro-batch and layer a forward is
attention compute, [TP all-reduce], [MoE dispatch all-to-all], MLP compute, [MoE combine
all-to-all], [TP all-reduce]; a backward mirrors it with twice the compute. A stage then sends its
activations (forward) or input gradients (backward) to the next/previous stage; the send blocks
the rank until it completes (Megatron's p2p waits on its requests). After its last backward each
rank all-reduces its gradients over its DP group, in ``dp_buckets`` sequential buckets, then (MoE)
its expert gradients over its expert-data-parallel group. ``tail_ps`` is the optimizer step.

Simplifications: no overlap of the DP all-reduce with backward, no tied-embedding all-reduce
between the first and last stage, no activation recomputation.
"""

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.topology.builders import rail_optimized
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.collectives import RankClock, alltoall_groups, ring_allreduce, split_bytes
from wormhole_lab.workload.flows import FlowBuilder, FlowTable
from wormhole_lab.workload.models import (
    DEFAULT_GPU_TFLOPS,
    ComputeModel,
    ModelConfig,
    dp_allreduce_bytes,
    edp_allreduce_bytes,
    ep_alltoall_bytes,
    get_model,
    params_per_gpu,
    placement_for,
    pp_activation_bytes,
    stage_layers,
    tp_allreduce_bytes,
)
from wormhole_lab.workload.placement import Placement

__all__ = ["gpt_job", "one_f_one_b", "training_iteration"]


def one_f_one_b(stage: int, n_stages: int, micro_batches: int) -> list[tuple[str, int]]:
    """The 1F1B op order of one stage: ``[("F", 0), ..., ("B", m), ...]``."""
    warm = min(n_stages - stage - 1, micro_batches)
    ops = [("F", m) for m in range(warm)]
    for i in range(micro_batches - warm):
        ops += [("F", warm + i), ("B", i)]
    return ops + [("B", m) for m in range(micro_batches - warm, micro_batches)]


def training_iteration(
    model: ModelConfig | str,
    placement: Placement,
    *,
    tp_traffic: bool = False,
    gpu_tflops: float = DEFAULT_GPU_TFLOPS,
    efficiency: float = 0.5,
    compute: ComputeModel | None = None,
    chunk_bytes: int | None = None,
    dp_buckets: int = 1,
    micro_batches: int | None = None,
) -> FlowTable:
    """Flows of one iteration with phases ``"pp"``, ``"dp"``, ``"ep"`` and (if ``tp_traffic``) ``"tp"``.

    ``compute`` overrides ``gpu_tflops``/``efficiency``. ``dp_buckets`` splits each DP all-reduce
    into that many sequential all-reduces (Megatron's gradient buckets); ``chunk_bytes`` pipelines
    every collective and p2p transfer in pieces (see ``collectives``). ``table.meta`` records the
    plan and the per-op compute times.
    """
    model = get_model(model) if isinstance(model, str) else model
    if not isinstance(model, ModelConfig):
        raise InputError("training_iteration(model)", f"{model!r} is not a ModelConfig", "pass get_model('GPT-13B')")
    if not isinstance(placement, Placement):
        raise InputError(
            "training_iteration(placement)",
            f"{placement!r} is not a Placement",
            "pass Placement(n_gpus, 8, tp=..., pp=...)",
        )
    if model.is_moe and model.experts % placement.ep:
        raise InputError(
            "Placement.ep",
            f"EP{placement.ep} does not divide {model.name}'s {model.experts} experts",
            "use an ep that divides the expert count",
        )
    if not model.is_moe and placement.ep > 1:
        raise InputError("Placement.ep", f"{model.name} is dense but the plan has EP{placement.ep}", "use ep=1")
    if isinstance(dp_buckets, bool) or not isinstance(dp_buckets, int) or dp_buckets < 1:
        raise InputError("training_iteration(dp_buckets)", f"dp_buckets={dp_buckets!r}", "pass an integer >= 1")
    n_micro = placement.pp if micro_batches is None else micro_batches
    if isinstance(n_micro, bool) or not isinstance(n_micro, int) or n_micro < 1:
        raise InputError("training_iteration(micro_batches)", f"micro_batches={n_micro!r}", "pass an integer >= 1")
    cm = compute or ComputeModel(gpu_tflops=gpu_tflops, efficiency=efficiency)

    P, pl = placement.pp, placement
    layers = stage_layers(model, P)
    attn_f, mlp_f = cm.layer_forward_ps(model, pl)
    logits_f = cm.logits_forward_ps(model, pl)
    stage_ranks = [pl.stage_ranks(p) for p in range(P)]
    by_stage = {
        kind: [[g for g in pl.groups(kind) if pl.coords(g[0])[2] == p] for p in range(P)]
        for kind in ("tp", "ep", "dp", "edp")
    }
    pp_share = split_bytes(pp_activation_bytes(model), pl.tp)
    tp_bytes = tp_allreduce_bytes(model) if tp_traffic and pl.tp > 1 else 0
    ep_bytes = ep_alltoall_bytes(model, pl)

    b = FlowBuilder()
    clock = RankClock(range(pl.n_gpus))

    def collective(kind: str, p: int, fn, size: int, phase: str) -> None:
        if size:
            for group in by_stage[kind][p]:
                clock.run(fn, b, group, size, phase=phase, chunk_bytes=chunk_bytes)

    def layer(p: int, backward: bool) -> None:
        k = 2 if backward else 1
        seg = [("c", attn_f * k), ("tp",), ("ep",), ("c", mlp_f * k), ("ep",), ("tp",)]
        for s in reversed(seg) if backward else seg:
            if s[0] == "c":
                clock.compute(stage_ranks[p], s[1])
            elif s[0] == "tp":
                collective("tp", p, ring_allreduce, tp_bytes, "tp")
            elif ep_bytes:  # every expert group of the stage at once: the same flows as one group at a time
                clock.run_groups(alltoall_groups, b, by_stage["ep"][p], ep_bytes, phase="ep", chunk_bytes=chunk_bytes)

    sent: dict[tuple[str, int, int], dict[int, tuple[int, ...]]] = {}  # (kind, stage, micro) -> rank -> ids

    def run_op(p: int, kind: str, m: int) -> None:
        src_stage = p - 1 if kind == "F" else p + 1
        if 0 <= src_stage < P:
            for r, ids in sent[(kind, src_stage, m)].items():
                if pl.coords(r)[2] == p:
                    clock.wait(r, ids)
        if kind == "B" and p == P - 1:
            clock.compute(stage_ranks[p], 2 * logits_f)
        for _ in range(layers[p]):
            layer(p, backward=kind == "B")
        if kind == "F" and p == P - 1:
            clock.compute(stage_ranks[p], logits_f)
        dst_stage = p + 1 if kind == "F" else p - 1
        if 0 <= dst_stage < P:
            out = {}
            for r in stage_ranks[p]:
                t, d, _ = pl.coords(r)
                peer = pl.rank(t, d, dst_stage)
                out[peer] = clock.send(b, r, peer, pp_share[t], phase="pp", chunk_bytes=chunk_bytes)[peer]
            sent[(kind, p, m)] = out

    schedule = [one_f_one_b(p, P, n_micro) for p in range(P)]
    ptr = [0] * P
    while any(ptr[p] < len(schedule[p]) for p in range(P)):
        progressed = False
        for p in range(P):
            while ptr[p] < len(schedule[p]):
                kind, m = schedule[p][ptr[p]]
                src_stage = p - 1 if kind == "F" else p + 1
                if 0 <= src_stage < P and (kind, src_stage, m) not in sent:
                    break
                run_op(p, kind, m)
                ptr[p] += 1
                progressed = True
        if not progressed:  # pragma: no cover - 1F1B never deadlocks
            raise RuntimeError("1F1B schedule made no progress")

    for p in range(P):
        for bucket in split_bytes(dp_allreduce_bytes(model, pl, p), dp_buckets):
            collective("dp", p, ring_allreduce, bucket, "dp")
        collective("edp", p, ring_allreduce, edp_allreduce_bytes(model, pl, p), "dp")

    max_params = max(sum(params_per_gpu(model, pl, p)) for p in range(P))
    tail = cm.optimizer_ps(max_params) + max(clock.gap.values(), default=0)
    table = b.build(tail_ps=tail)
    table.meta.update(
        workload="training_iteration",
        model=model.name,
        placement=str(pl),
        micro_batches=n_micro,
        tp_traffic=bool(tp_traffic),
        dp_buckets=dp_buckets,
        chunk_bytes=chunk_bytes,
        layer_forward_ps=(attn_f, mlp_f),
        logits_forward_ps=logits_f,
        optimizer_ps=cm.optimizer_ps(max_params),
        phases={ph: int(np.sum(table.phase == ph)) for ph in ("pp", "dp", "ep", "tp")},
    )
    return table


def gpt_job(
    name: str,
    n_gpus: int | None = None,
    *,
    tp: int | None = None,
    pp: int | None = None,
    ep: int | None = None,
    gpus_per_server: int = 8,
    tp_traffic: bool = False,
    chunk_bytes: int | None = None,
    dp_buckets: int = 1,
    gpu_tflops: float = DEFAULT_GPU_TFLOPS,
    efficiency: float = 0.5,
    micro_batches: int | None = None,
    **topology,
) -> tuple[Topology, FlowTable]:
    """A Table 1 preset (GPT or MoE) on a rail-optimized cluster in one line.

    ``gpt_job("GPT-13B")`` is TP8-DP4-PP4 on 128 GPUs; at another ``n_gpus`` TP/PP/EP are kept and
    DP scales. ``topology`` goes to ``rail_optimized`` (e.g. ``host_rate_bps``); NVSwitches are
    added when ``tp_traffic`` is on, so TP flows stay inside the server.
    """
    placement = placement_for(name, n_gpus, gpus_per_server, tp=tp, pp=pp, ep=ep)
    topology.setdefault("nvlink", bool(tp_traffic))
    topo = rail_optimized(placement.n_gpus // gpus_per_server, gpus_per_server, **topology)
    flows = training_iteration(
        get_model(name),
        placement,
        tp_traffic=tp_traffic,
        gpu_tflops=gpu_tflops,
        efficiency=efficiency,
        chunk_bytes=chunk_bytes,
        dp_buckets=dp_buckets,
        micro_batches=micro_batches,
    )
    return topo, flows
