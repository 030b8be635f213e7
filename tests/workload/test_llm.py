"""One training iteration: 1F1B pipeline flows, DP all-reduce, EP all-to-alls, knobs that react."""

import networkx as nx
import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.llm import gpt_job, one_f_one_b, training_iteration
from wormhole_lab.workload.models import dp_allreduce_bytes, get_model, pp_activation_bytes
from wormhole_lab.workload.placement import Placement
from wormhole_lab.workload.validate import check_flows

SMALL = get_model("GPT-7B").replace(name="GPT-small", layers=4, hidden=1024, ffn=4096, heads=16)
PLAN = Placement(32, 8, tp=8, pp=2, dp=2)


def graph(t) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(len(t)))
    g.add_edges_from((int(d), i) for i in range(len(t)) for d in t.deps(i))
    return g


@pytest.mark.parametrize(("p", "P", "M"), [(0, 4, 4), (3, 4, 4), (1, 4, 8), (0, 4, 2)])
def test_one_f_one_b(p, P, M):
    ops = one_f_one_b(p, P, M)
    assert sorted(ops) == sorted([("F", m) for m in range(M)] + [("B", m) for m in range(M)])
    assert all(ops.index(("F", m)) < ops.index(("B", m)) for m in range(M))
    warm = min(P - p - 1, M)
    n_first = min(warm + 1, M)  # warm-up forwards, then the first steady-state forward
    assert [k for k, _ in ops[:n_first]] == ["F"] * n_first
    assert ops[n_first] == ("B", 0)


def test_iteration_structure():
    t = training_iteration(SMALL, PLAN)
    M, per_stage = 2, PLAN.tp * PLAN.dp
    pp = t.phase == "pp"
    assert pp.sum() == 2 * (PLAN.pp - 1) * M * per_stage  # forward and backward, every micro-batch
    assert set(t.size[pp].tolist()) == {pp_activation_bytes(SMALL) // PLAN.tp}
    assert set(t.phase.tolist()) == {"pp", "dp"}
    g = graph(t)
    assert nx.is_directed_acyclic_graph(g)
    # every PP flow joins the same (tp, dp) of adjacent stages: on one rail
    for s, d in zip(t.src[pp].tolist(), t.dst[pp].tolist(), strict=True):
        assert PLAN.coords(s)[:2] == PLAN.coords(d)[:2] and abs(PLAN.coords(s)[2] - PLAN.coords(d)[2]) == 1
    # DP: each rank sends 2(n-1)/n of its stage's gradient bytes
    dp = t.phase == "dp"
    for r in range(PLAN.n_gpus):
        mine = dp & (t.src == r)
        assert int(t.size[mine].sum()) == pytest.approx(dp_allreduce_bytes(SMALL, PLAN, PLAN.coords(r)[2]), abs=2)
    # a DP flow of stage 1 waits (transitively) for that rank's last backward send
    first_dp = int(np.flatnonzero(dp & (t.src == PLAN.rank(0, 0, 1)))[0])
    last_bwd = int(np.flatnonzero(pp & (t.src == PLAN.rank(0, 0, 1)))[-1])
    assert nx.has_path(g, last_bwd, first_dp)
    # compute gaps: the first forward send waits for stage 0's forward compute
    assert t.gap_ps[0] > 0 and t.tail_ps > 0


def test_pipeline_order_is_1f1b():
    t = training_iteration(SMALL, Placement(32, 8, tp=8, pp=4, dp=1), micro_batches=4)
    g = graph(t)
    pp = np.flatnonzero(t.phase == "pp")
    sends = {}  # (src, dst) -> flow ids in micro-batch order, for the tp=0 pipeline 0-8-16-24
    for i in pp:
        sends.setdefault((int(t.src[i]), int(t.dst[i])), []).append(int(i))
    assert all(len(v) == 4 for v in sends.values()) and len(sends) == 3 * 2 * 8
    first_back = sends[(24, 16)][0]  # the last stage's backward of micro-batch 0
    assert all(nx.has_path(g, sends[hop][0], first_back) for hop in ((0, 8), (8, 16), (16, 24)))
    assert not nx.has_path(g, sends[(0, 8)][3], first_back)  # 1F1B, not GPipe: B0 does not wait for F3
    assert nx.has_path(g, sends[(16, 8)][0], sends[(8, 16)][3])  # stage 1 runs F3 after B0 (F0 F1 F2 B0 F3)
    assert not nx.has_path(g, sends[(16, 8)][0], sends[(8, 16)][2])


def test_knobs_react():
    base = training_iteration(SMALL, PLAN)
    slow = training_iteration(SMALL, PLAN, gpu_tflops=156)
    assert slow.gap_ps.sum() > 1.9 * base.gap_ps.sum()
    buckets = training_iteration(SMALL, PLAN, dp_buckets=3)
    dp_b, dp_0 = buckets.phase == "dp", base.phase == "dp"
    assert dp_b.sum() == 3 * dp_0.sum() and buckets.size[dp_b].sum() == base.size[dp_0].sum()
    chunked = training_iteration(SMALL, PLAN, chunk_bytes=1 << 20)
    assert len(chunked) > len(base) and chunked.size.max() <= 1 << 20
    assert chunked.size.sum() == base.size.sum()


def test_tp_traffic_stays_in_servers():
    t = training_iteration(SMALL, PLAN, tp_traffic=True)
    tp = t.phase == "tp"
    assert tp.sum() == 2 * 2 * SMALL.layers // PLAN.pp * 2 * PLAN.n_gpus * 2 * (PLAN.tp - 1)
    assert (t.src[tp] // 8 == t.dst[tp] // 8).all()
    assert nx.is_directed_acyclic_graph(graph(t))


def test_moe_all_to_all_in_ep_groups():
    model = get_model("MoE-8x7B").replace(layers=2, hidden=512, ffn=2048, heads=8)
    pl = Placement(32, 4, tp=4, pp=1, dp=8, ep=4)
    t = training_iteration(model, pl)
    ep = t.phase == "ep"
    groups = {frozenset(g) for g in pl.ep_groups()}
    assert all(any({s, d} <= g for g in groups) for s, d in zip(t.src[ep], t.dst[ep], strict=True))
    # per layer and micro-batch: dispatch + combine, forward and backward; every rank to 3 peers
    assert ep.sum() == model.layers * 1 * 4 * pl.n_gpus * (pl.ep - 1)
    dp_flows = t.phase == "dp"
    assert dp_flows.sum() == pl.n_gpus * 2 * (8 - 1) + pl.n_gpus * 2 * (2 - 1)  # dense over DP8, experts over DP/EP=2
    assert nx.is_directed_acyclic_graph(graph(t))


def test_gpt_job_one_liner_runs_checks():
    topo, flows = gpt_job("GPT-7B", 16, pp=2, host_rate_bps=200 * 10**9)
    assert topo.meta["n_servers"] == 2 and topo.meta["host_rate_bps"] == 200 * 10**9
    check_flows(flows, topo)
    assert flows.meta["placement"] == "TP8-DP1-PP2 on 16 GPUs"
    topo, flows = gpt_job("MoE-8x7B")  # the paper's 64-GPU MoE job
    check_flows(flows, topo)
    assert {"pp", "dp", "ep"} <= set(flows.phase.tolist())


def test_bad_plans():
    with pytest.raises(InputError, match="EP3 does not divide"):
        training_iteration(get_model("MoE-8x7B"), Placement(48, 8, tp=8, pp=2, dp=3, ep=3))
    with pytest.raises(InputError, match="dense"):
        training_iteration(SMALL, Placement(32, 8, tp=8, pp=1, dp=4, ep=2))
    with pytest.raises(InputError, match="dp_buckets"):
        training_iteration(SMALL, PLAN, dp_buckets=0)
