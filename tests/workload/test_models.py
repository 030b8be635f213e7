"""Model presets (Table 1), Megatron communication sizes and the FLOPs model."""

import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.models import (
    MODELS,
    TABLE1,
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
)
from wormhole_lab.workload.placement import Placement


@pytest.mark.parametrize(("name", "billions"), [("GPT-7B", 6.7), ("GPT-13B", 13), ("GPT-22B", 22), ("GPT-175B", 175)])
def test_dense_sizes_match_their_names(name, billions):
    assert get_model(name).total_params() == pytest.approx(billions * 1e9, rel=0.04)


def test_presets_and_table1_agree():
    assert (
        set(MODELS)
        == set(TABLE1)
        == {"GPT-7B", "GPT-13B", "GPT-22B", "GPT-175B", "MoE-8x7B", "MoE-8x13B", "MoE-8x22B", "MoE-32x22B"}
    )
    for name, plan in TABLE1.items():
        pl = placement_for(name)
        assert (pl.n_gpus, pl.tp, pl.dp, pl.pp, pl.ep) == (plan.n_gpus, plan.tp, plan.dp, plan.pp, plan.ep)
        assert get_model(name).is_moe == name.startswith("MoE")
    assert get_model("moe-8×7b").experts == 8 and get_model("MoE-32x22B").top_k == 2
    assert placement_for("GPT-13B", 32).dp == 1  # other scales keep TP and PP


def test_unknown_model():
    with pytest.raises(InputError, match="unknown model"):
        get_model("GPT-5")


def test_params_per_gpu_add_up():
    m = get_model("GPT-13B")
    pl = placement_for("GPT-13B")
    held = sum(params_per_gpu(m, pl, p)[0] for p in range(pl.pp)) * pl.tp
    tied_copy = m.vocab * m.hidden  # the last stage's copy of the output embedding
    assert held == pytest.approx(m.total_params() + tied_copy, rel=1e-6)
    assert dp_allreduce_bytes(m, pl, 1) == 2 * params_per_gpu(m, pl, 1)[0]
    assert edp_allreduce_bytes(m, pl, 1) == 0


def test_moe_expert_params_spread_over_ep():
    m = get_model("MoE-8x22B")
    pl = placement_for("MoE-8x22B")
    dense, expert = params_per_gpu(m, pl, 1)
    assert expert == stage_layers(m, pl.pp)[1] * (8 // pl.ep) * m.mlp_params // pl.tp
    assert ep_alltoall_bytes(m, pl) == 2048 // 8 * 2 * m.hidden * 2


def test_communication_formulas():
    m = get_model("GPT-13B")
    assert pp_activation_bytes(m) == 2048 * 1 * 5120 * 2  # = 8 x SimAI's per-TP-rank pp_comm 2621440
    assert ep_alltoall_bytes(m, Placement(8, 8, tp=8)) == 0
    assert stage_layers(m.replace(layers=10), 4) == [3, 3, 2, 2]


def test_compute_model_reacts_to_gpu_speed():
    m, pl = get_model("GPT-7B"), placement_for("GPT-7B")
    slow, fast = ComputeModel(gpu_tflops=100), ComputeModel(gpu_tflops=200)
    assert slow.ps(1e12) == 2 * 10**10  # 1e12 flop at 50 TFLOP/s effective = 20 ms
    a_slow, m_slow = slow.layer_forward_ps(m, pl)
    a_fast, m_fast = fast.layer_forward_ps(m, pl)
    assert a_slow == pytest.approx(2 * a_fast, abs=1) and m_slow == pytest.approx(2 * m_fast, abs=1)
    assert m_fast > a_fast > 0


@pytest.mark.parametrize(
    "bad",
    [
        lambda: ComputeModel(efficiency=1.5),
        lambda: ComputeModel(gpu_tflops=0),
        lambda: ModelConfig("x", hidden=0, layers=1, heads=1, ffn=1),
        lambda: ModelConfig("x", hidden=8, layers=1, heads=1, ffn=8, experts=4, top_k=5),
        lambda: stage_layers(get_model("GPT-7B"), 64),
    ],
)
def test_bad_values(bad):
    with pytest.raises(InputError):
        bad()
