"""Model presets of the Wormhole paper's Table 1, Megatron communication sizes and a FLOPs model.

The paper names the models and their parallelism only; the dimensions are our choice of standard
configs (GPT-3 paper, Brown et al. 2020, and Megatron's Korthikanti et al. 2022 for 22B):

=========  ======  ======  =====  ======
model      hidden  layers  heads  ffn
=========  ======  ======  =====  ======
GPT-7B     4096    32      32     16384   (GPT-3 6.7B)
GPT-13B    5120    40      40     20480   (GPT-3 13B)
GPT-22B    6144    48      64     24576   (Megatron 22B)
GPT-175B   12288   96      96     49152   (GPT-3 175B)
=========  ======  ======  =====  ======

All use sequence length 2048 (GPT-3; SimAI's gpt7b/gpt13b example files imply the same) and
vocabulary 51200 (GPT-2's 50257 padded by Megatron to a multiple of 128*TP). ``MoE-ExS`` is the
GPT-S backbone with E experts of the dense MLP's size in *every* layer, top-2 routing
(GShard/Mixtral style; the real Mixtral-8x7B differs slightly: SwiGLU ffn 14336, vocab 32000).
Micro-batch 1 and global batch DP*PP, as the paper states, so each pipeline runs PP micro-batches.

Table 1 gives MoE-8x7B and MoE-8x13B EP8 with DP4, which cannot be placed when EP groups are blocks
of DP ranks (SimAI gets away with it because it builds its communicators with PP forced to 1, so
its DP is 8 or 16 there). Those two presets use EP4 (= DP) and say so in ``Parallelism.note``.

Sizes (bytes, bf16 = 2 bytes per element; Megatron formulas):
- DP gradient all-reduce per GPU = non-expert parameters on the GPU x 2; expert gradients are
  all-reduced separately over the expert-data-parallel group (size DP/EP).
- PP activation (and gradient) per micro-batch = seq x micro_batch x hidden x 2 per pipeline; each
  TP rank sends 1/TP of it (Megatron's scatter-gather / sequence parallelism; AICB's ``pp_comm``).
- TP all-reduce (optional traffic): seq x micro_batch x hidden x 2, twice per layer forward and
  twice backward.
- MoE all-to-all (dispatch and combine, forward and backward): per-rank buffer
  seq x micro_batch / TP x top_k x hidden x 2, of which each EP peer gets 1/EP (matches AICB's
  DeepSeek workload).
"""

import dataclasses
from dataclasses import dataclass

from wormhole_lab.errors import InputError
from wormhole_lab.workload.collectives import split_bytes
from wormhole_lab.workload.placement import Placement

__all__ = [
    "MODELS",
    "TABLE1",
    "DEFAULT_GPU_TFLOPS",
    "ComputeModel",
    "ModelConfig",
    "Parallelism",
    "dp_allreduce_bytes",
    "edp_allreduce_bytes",
    "ep_alltoall_bytes",
    "get_model",
    "params_per_gpu",
    "placement_for",
    "pp_activation_bytes",
    "stage_layers",
    "tp_allreduce_bytes",
]

BYTES_PER_ELEMENT = 2  # bf16


@dataclass(frozen=True)
class ModelConfig:
    """A transformer's dimensions. ``experts == 0`` means a dense model."""

    name: str
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int = 51200
    seq_len: int = 2048
    micro_batch: int = 1
    experts: int = 0
    top_k: int = 0

    def __post_init__(self):
        for f in ("hidden", "layers", "heads", "ffn", "vocab", "seq_len", "micro_batch"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(
                    f"ModelConfig({self.name}).{f}",
                    f"{f}={v!r} must be an integer >= 1",
                    "pass a positive whole number",
                )
        if self.experts < 0 or (self.experts and not 1 <= self.top_k <= self.experts):
            raise InputError(
                f"ModelConfig({self.name}).top_k",
                f"top_k={self.top_k} with {self.experts} experts",
                "use experts=0 (dense) or 1 <= top_k <= experts",
            )

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    def replace(self, **changes) -> "ModelConfig":
        """A copy with some fields changed, e.g. ``get_model("GPT-7B").replace(layers=4)``."""
        return dataclasses.replace(self, **changes)

    # parameter counts (weights + biases, Megatron GPT layout)
    @property
    def attention_params(self) -> int:
        """QKV + output projection + the layer's two layernorms."""
        h = self.hidden
        return 4 * h * h + 4 * h + 4 * h

    @property
    def mlp_params(self) -> int:
        """One dense MLP (or one expert): h->ffn->h with biases."""
        return 2 * self.hidden * self.ffn + self.ffn + self.hidden

    @property
    def embedding_params(self) -> int:
        return self.vocab * self.hidden + self.seq_len * self.hidden

    def total_params(self) -> int:
        mlp = self.experts * self.mlp_params + self.hidden * self.experts if self.is_moe else self.mlp_params
        return self.layers * (self.attention_params + mlp) + self.embedding_params + 2 * self.hidden


@dataclass(frozen=True)
class Parallelism:
    """A Table 1 plan. ``note`` records where the preset departs from the paper."""

    n_gpus: int
    tp: int
    dp: int
    pp: int
    ep: int = 1
    note: str = ""


def _gpt(name, h, layers, heads):
    return ModelConfig(name, hidden=h, layers=layers, heads=heads, ffn=4 * h)


_GPT = {
    m.name: m
    for m in (
        _gpt("GPT-7B", 4096, 32, 32),
        _gpt("GPT-13B", 5120, 40, 40),
        _gpt("GPT-22B", 6144, 48, 64),
        _gpt("GPT-175B", 12288, 96, 96),
    )
}
MODELS: dict[str, ModelConfig] = dict(_GPT)
for _e, _s in ((8, "7B"), (8, "13B"), (8, "22B"), (32, "22B")):
    MODELS[f"MoE-{_e}x{_s}"] = _GPT[f"GPT-{_s}"].replace(name=f"MoE-{_e}x{_s}", experts=_e, top_k=2)

_EP_NOTE = "paper: EP8, which does not divide DP4; EP4 used (EP groups are blocks of DP ranks)"
TABLE1: dict[str, Parallelism] = {
    "GPT-7B": Parallelism(64, tp=8, dp=4, pp=2),
    "GPT-13B": Parallelism(128, tp=8, dp=4, pp=4),
    "GPT-22B": Parallelism(256, tp=8, dp=8, pp=4),
    "GPT-175B": Parallelism(1024, tp=8, dp=16, pp=8),
    "MoE-8x7B": Parallelism(64, tp=8, dp=4, pp=2, ep=4, note=_EP_NOTE),
    "MoE-8x13B": Parallelism(128, tp=8, dp=4, pp=4, ep=4, note=_EP_NOTE),
    "MoE-8x22B": Parallelism(256, tp=8, dp=8, pp=4, ep=8),
    "MoE-32x22B": Parallelism(1024, tp=8, dp=16, pp=8, ep=8),
}


def _key(name: str) -> str:
    return str(name).strip().lower().replace("×", "x").replace("_", "-").replace(" ", "")


def get_model(name: str) -> ModelConfig:
    """A preset by name (case-insensitive; ``MoE-8×7B`` and ``moe-8x7b`` both work)."""
    found = {_key(k): v for k, v in MODELS.items()}.get(_key(name))
    if found is None:
        raise InputError(f"model {name!r}", "unknown model preset", f"use one of {', '.join(MODELS)}")
    return found


def placement_for(
    name: str,
    n_gpus: int | None = None,
    gpus_per_server: int = 8,
    *,
    tp: int | None = None,
    pp: int | None = None,
    ep: int | None = None,
) -> Placement:
    """Table 1's plan for ``name``; at another GPU count TP, PP and EP are kept and DP scales."""
    model = get_model(name)
    plan = TABLE1[model.name]
    n = plan.n_gpus if n_gpus is None else n_gpus
    return Placement(
        n,
        gpus_per_server,
        tp=plan.tp if tp is None else tp,
        pp=plan.pp if pp is None else pp,
        ep=plan.ep if ep is None else ep,
    )


def stage_layers(model: ModelConfig, pp: int) -> list[int]:
    """Layers per pipeline stage (earlier stages take the remainder)."""
    if pp > model.layers:
        raise InputError(
            "Placement.pp",
            f"PP{pp} has more stages than {model.name}'s {model.layers} layers",
            f"use pp <= {model.layers}",
        )
    return split_bytes(model.layers, pp)


def params_per_gpu(model: ModelConfig, placement: Placement, stage: int) -> tuple[int, int]:
    """``(non_expert, expert)`` parameters held by one GPU of ``stage``.

    Stage 0 holds the embeddings, the last stage the final layernorm and (when PP > 1) its copy of
    the tied output embedding; experts are spread over EP ranks and every expert over TP ranks.
    """
    n_layers = stage_layers(model, placement.pp)[stage]
    tp = placement.tp
    dense = n_layers * model.attention_params
    expert = 0
    if model.is_moe:
        dense += n_layers * model.hidden * model.experts  # router, replicated
        expert = n_layers * (model.experts // placement.ep) * model.mlp_params // tp
    else:
        dense += n_layers * model.mlp_params
    if stage == 0:
        dense += model.embedding_params
    if stage == placement.pp - 1:
        dense += 2 * model.hidden + (model.vocab * model.hidden if placement.pp > 1 else 0)
    return dense // tp, expert


def dp_allreduce_bytes(model: ModelConfig, placement: Placement, stage: int) -> int:
    """Gradient all-reduce over the DP group: non-expert parameters per GPU x 2 bytes."""
    return params_per_gpu(model, placement, stage)[0] * BYTES_PER_ELEMENT


def edp_allreduce_bytes(model: ModelConfig, placement: Placement, stage: int) -> int:
    """Expert-gradient all-reduce over the expert-data-parallel group (0 for dense models)."""
    return params_per_gpu(model, placement, stage)[1] * BYTES_PER_ELEMENT


def pp_activation_bytes(model: ModelConfig) -> int:
    """Activation (or its gradient) of one micro-batch between two stages, for the whole TP group."""
    return model.seq_len * model.micro_batch * model.hidden * BYTES_PER_ELEMENT


def tp_allreduce_bytes(model: ModelConfig) -> int:
    """One TP all-reduce of a layer's activations (no sequence parallelism)."""
    return model.seq_len * model.micro_batch * model.hidden * BYTES_PER_ELEMENT


def ep_alltoall_bytes(model: ModelConfig, placement: Placement) -> int:
    """Per-rank buffer of one MoE dispatch or combine all-to-all (each EP peer gets 1/EP of it)."""
    if not model.is_moe:
        return 0
    tokens = model.seq_len * model.micro_batch // placement.tp
    return tokens * model.top_k * model.hidden * BYTES_PER_ELEMENT


DEFAULT_GPU_TFLOPS = 312.0  # A100 dense BF16 peak (NVIDIA A100 datasheet): the paper's GPUs


@dataclass(frozen=True)
class ComputeModel:
    """Compute time from FLOPs: ``time = flops / (gpu_tflops * efficiency)``, in ps.

    Defaults: A100 bf16 dense peak 312 TFLOP/s at 50 % efficiency (Megatron reports 44-52 % of peak
    for GPT-3-size models, Narayanan et al. 2021). Forward FLOPs of a layer per micro-batch are
    2 x tokens x (parameters a token touches) plus 4 x micro_batch x seq^2 x hidden for attention
    scores; backward is twice the forward; each GPU does 1/TP. The optimizer step is memory-bound:
    ``optimizer_bytes_per_param`` of HBM traffic per parameter (fp32 master, Adam moments, bf16
    param and grad) at ``hbm_gbytes_per_s`` (A100-40GB: 1555 GB/s).
    """

    gpu_tflops: float = DEFAULT_GPU_TFLOPS
    efficiency: float = 0.5
    hbm_gbytes_per_s: float = 1555.0
    optimizer_bytes_per_param: int = 32

    def __post_init__(self):
        for f in ("gpu_tflops", "efficiency", "hbm_gbytes_per_s", "optimizer_bytes_per_param"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
                raise InputError(
                    f"ComputeModel.{f}", f"{f}={v!r} must be a positive number", "e.g. gpu_tflops=312, efficiency=0.5"
                )
        if self.efficiency > 1:
            raise InputError(
                "ComputeModel.efficiency",
                f"efficiency={self.efficiency} is above 1",
                "give the fraction of peak, e.g. 0.5",
            )

    def scaled(self, scale: float) -> "ComputeModel":
        """This GPU doing ``scale`` of the work: every compute time (layers and the memory-bound optimizer step
        alike) times ``scale``, by a GPU and HBM faster by 1/scale."""
        return dataclasses.replace(
            self, gpu_tflops=self.gpu_tflops / scale, hbm_gbytes_per_s=self.hbm_gbytes_per_s / scale
        )

    def ps(self, flops: float) -> int:
        """Picoseconds for ``flops`` floating-point operations (1 TFLOP/s = 1 flop/ps)."""
        return int(round(flops / (self.gpu_tflops * self.efficiency)))

    def layer_forward_ps(self, model: ModelConfig, placement: Placement) -> tuple[int, int]:
        """``(attention, mlp)`` forward time of one layer for one micro-batch on one GPU."""
        tokens = model.seq_len * model.micro_batch
        attn = 2 * tokens * model.attention_params + 4 * model.micro_batch * model.seq_len**2 * model.hidden
        if model.is_moe:
            mlp = 2 * tokens * (model.top_k * model.mlp_params + model.hidden * model.experts)
        else:
            mlp = 2 * tokens * model.mlp_params
        return self.ps(attn / placement.tp), self.ps(mlp / placement.tp)

    def logits_forward_ps(self, model: ModelConfig, placement: Placement) -> int:
        """Output projection onto the vocabulary (last stage), one micro-batch."""
        return self.ps(2 * model.seq_len * model.micro_batch * model.vocab * model.hidden / placement.tp)

    def optimizer_ps(self, params: int) -> int:
        return int(round(params * self.optimizer_bytes_per_param / self.hbm_gbytes_per_s * 1000))
