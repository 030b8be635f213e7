"""SimAI/AICB workload files: the real ones load, byte totals match the columns, bad files fail loudly."""

import re
import warnings
from collections import defaultdict
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology.hpcc_format import read_topology
from wormhole_lab.workload.placement import Placement
from wormhole_lab.workload.simai import SimaiWarning, read_simai, simai_flows, total_bytes_by_type
from wormhole_lab.workload.validate import check_dependencies, check_flows

SIMAI = Path(__file__).resolve().parents[2] / ".." / "shared" / "workloads" / "simai"
REQUIRED = [
    "workload_gpt13b_128g.txt",
    "workload_gpt7b_64g.txt",
    "workload_ep_test.txt",
    "DeepSeek-16B-tp2-pp2-dp2-ep4-g32-mpdeptip.txt",
]
OTHERS = [
    "GPT-13B-tp4-pp1-dp4-ep1-g16-mpc3iofm.txt",
    "G175B-M1-C03_GPT175B_megatron_tp8_pp1_mbs1_A100.txt",
    "G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt",
    "microAllReduce.txt",
    "microAllReduce_dp.txt",
    "workload_analytical.txt",
]
TOPOS = {  # file -> GPUs it really holds (the names overstate it)
    "Rail_Opti_SingleToR_64gpu_8gps_200Gbps_H20": 8,
    "Rail_Opti_SingleToR_128gpu_8gps_200Gbps_H20": 16,
    "Rail_Opti_SingleToR_16g_8gps_200Gbps_H20": 16,
}
HEADER = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8"
ROW = "layer\t-1\t10\tALLREDUCE\t4096\t10\tNONE\t0\t10\tALLREDUCE\t8192\t100"


def shared(name: str) -> Path:
    path = SIMAI / name
    if not path.exists():
        pytest.skip(f"{path} is absent (the SimAI files live in ../shared/workloads/simai, never in the repo)")
    return path


def independent_totals(path: Path) -> dict[tuple[str, str], int]:
    """Sum the size columns by collective and group straight from the text."""
    lines = path.read_text().split("\n")
    count = int(lines[1])
    totals = defaultdict(int)
    rows = [ln.split() for ln in lines[2:] if ln.strip()][:count]
    for cols in rows:
        for type_col, size_col, plain in ((3, 4, "TP"), (6, 7, "TP"), (9, 10, "DP")):
            m = re.fullmatch(r"(ALLREDUCE|ALLGATHER|REDUCESCATTER|ALLTOALL)(_DP_EP|_EP)?", cols[type_col])
            if m:
                group = {None: plain, "_EP": "EP", "_DP_EP": "DP_EP"}[m.group(2)]
                totals[(m.group(1), group)] += int(cols[size_col])
    return dict(totals)


@pytest.mark.parametrize("name", REQUIRED + OTHERS)
def test_real_files_load_and_totals_match(name):
    path = shared(name)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        w = read_simai(path)
    quirky = "G13B-M1" in name or "analytical" in name  # BROADCAST row; pp 12 without pp_comm
    assert any(issubclass(r.category, SimaiWarning) for r in rec) == quirky
    assert len(w.rows) == int(path.read_text().split("\n")[1])
    assert total_bytes_by_type(w) == independent_totals(path)


def test_header_details():
    ds = read_simai(shared(REQUIRED[3]))
    assert (ds.tp, ds.ep, ds.pp, ds.ga, ds.all_gpus, ds.pp_comm, ds.dp) == (2, 4, 2, 8, 32, 8388608, 8)
    assert not ds.legacy and ds.rows[0].line == 3 and ds.rows[-1].name == "optimizer4"
    with pytest.warns(SimaiWarning, match="BROADCAST"):
        legacy = read_simai(shared(OTHERS[2]))
    assert legacy.legacy and legacy.tp == 8 and legacy.all_gpus is None and legacy.rows[0].fwd_comm == "NONE"
    ep = read_simai(shared("workload_ep_test.txt"))
    assert total_bytes_by_type(ep)[("ALLTOALL", "EP")] == 16 * 25165824  # 4 layers x 2 rows x (forward + input-grad)


def test_flows_gpt13b_pipeline():
    w = read_simai(shared("workload_gpt13b_128g.txt"))
    t = simai_flows(w)
    pp = t.phase == "pp"
    # 16 micro-batches (one per embedding_layer), forward and backward, 64 ranks of stage 0 <-> 64 of stage 1
    assert pp.sum() == 2 * 16 * 64 and set(t.size[pp].tolist()) == {2621440}
    check_dependencies(t)
    assert t.meta["micro_batches"] == 16
    # the only DP collective is grad_norm's weight-gradient reduce-scatter on DP = 128/(8*2) = 8
    dp = t.phase == "dp"
    assert t.size[dp].sum() == 128 * 3142615040 * 7 // 8


def test_flows_ep_bytes_match_columns():
    w = read_simai(shared("workload_ep_test.txt"))
    t = simai_flows(w)  # 32 GPUs: TP4, DP8, EP4, DP_EP 2
    tot = total_bytes_by_type(w)
    ep_bytes = t.size[t.phase == "ep"].sum()
    assert ep_bytes == 32 * tot[("ALLTOALL", "EP")] * 3 // 4  # each rank sends 3/4 of its buffer
    dp_bytes = t.size[t.phase == "dp"].sum()
    dense = tot[("ALLGATHER", "DP")] + tot[("REDUCESCATTER", "DP")]
    expert = tot[("ALLGATHER", "DP_EP")] + tot[("REDUCESCATTER", "DP_EP")]
    assert dp_bytes == 32 * (dense * 7 // 8 + expert // 2)
    assert "tp" not in set(t.phase.tolist())
    with_tp = simai_flows(w, tp_traffic=True)
    tp = with_tp.phase == "tp"
    assert tp.any() and (with_tp.src[tp] // 8 == with_tp.dst[tp] // 8).all()
    assert nx.is_directed_acyclic_graph(_graph(with_tp))


def test_deepseek_flows():
    w = read_simai(shared(REQUIRED[3]))
    t = simai_flows(w)
    check_dependencies(t)
    assert {"pp", "dp", "ep"} <= set(t.phase.tolist()) and t.meta["micro_batches"] == 8
    assert t.gap_ps.max() > 0 and (t.size > 0).all()


@pytest.mark.parametrize("name", list(TOPOS))
def test_topology_files(name):
    topo = read_topology(shared(f"topo/{name}"))
    assert len(topo.hosts) == TOPOS[name] and topo.meta["gpus_per_server"] == 8
    if TOPOS[name] == 16:
        w = read_simai(shared("workload_ep_test.txt"))
        t = simai_flows(w, topo)  # 16 GPUs: TP4, DP4, EP4
        check_flows(t, topo)
        assert t.meta["placement"] == "TP4-EP4-DP4-PP1 on 16 GPUs"
    else:
        with pytest.raises(InputError, match="does not fit 8 GPUs"):
            simai_flows(read_simai(shared("workload_gpt13b_128g.txt")), topo)


def test_placement_must_match_header(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text(f"{HEADER}\n1\n{ROW}\n")
    w = read_simai(path)
    t = simai_flows(w, Placement(8, 8, tp=2))
    assert (t.phase == "dp").sum() == 8 * 2 * 3  # weight-gradient all-reduce over DP4
    first = int(np.flatnonzero(t.phase == "dp")[0])
    assert t.gap_ps[first] == 30_000 and t.tail_ps == 0  # fwd + ig + wg compute (10 ns each) before it
    with pytest.raises(InputError, match="tp=4"):
        simai_flows(w, Placement(8, 8, tp=4))


def _graph(t):
    g = nx.DiGraph()
    g.add_nodes_from(range(len(t)))
    g.add_edges_from((int(d), i) for i in range(len(t)) for d in t.deps(i))
    return g


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        (f"{HEADER}\n2\n{ROW}\nlayer -1 10 ALLREDUCE 4096 10 NONE 0 10 NONE 0\n", 4, "11 columns"),
        (f"{HEADER}\n1\n{ROW.replace('ALLREDUCE', 'ALLREDUSE', 1)}\n", 3, "unknown fwd comm type 'ALLREDUSE'"),
        (f"{HEADER}\n1\n{ROW.replace('ALLREDUCE', 'ALLREDUCE_TP', 1)}\n", 3, "unknown fwd comm type"),
        (f"{HEADER.replace(' all_gpus: 8', '')}\n1\n{ROW}\n", 1, "lacks 'all_gpus:'"),
        (f"{HEADER.replace('model_parallel_NPU_group: 2 ', '')}\n1\n{ROW}\n", 1, "model_parallel_NPU_group"),
        (f"{HEADER}\n3\n{ROW}\n{ROW}\n", 5, "ends after 2 of the 3 rows"),
        (f"{HEADER}\n1\n{ROW.replace('4096', '40.5')}\n", 3, "whole number"),
        (f"{HEADER}\n1\n{ROW.replace('-1', 'x')}\n", 3, "dependency"),
        (f"{HEADER}\nmany\n{ROW}\n", 2, "row count"),
        (f"TRAINING {HEADER[32:]}\n1\n{ROW}\n", 1, "unknown run type"),
        (f"{HEADER} pp: 2\n1\n{ROW}\n", 1, "appears twice"),
        ("", 1, "empty"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, text, line, match):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=match) as err:
        read_simai(path)
    assert err.value.where == f"{path}:{line}"
    assert err.value.fix


def test_tolerated_quirks_warn(tmp_path):
    path = tmp_path / "quirks.txt"
    header = HEADER.replace("all_gpus: 8", "all_gpus: 8 pp_comm 1048576.0 foo: 3").replace("pp: 1", "pp: 2")
    path.write_text(f"{header}\n1\n{ROW.replace('NONE', 'BROADCAST')}\nextra line\n")
    with pytest.warns(SimaiWarning) as rec:
        w = read_simai(path)
    text = " ".join(str(r.message) for r in rec)
    assert "BROADCAST" in text and "foo" in text and "ignored" in text
    assert w.pp_comm == 1048576 and w.pp == 2 and w.rows[0].ig_comm == "NONE"
    t = simai_flows(w)  # 8 GPUs: TP2, PP2, DP2: one micro-batch, forward and backward p2p
    assert (t.phase == "pp").sum() == 2 * 4
    assert np.all(t.size[t.phase == "pp"] == 1048576)
