"""One description of a decoder-only transformer that covers the families people run (Llama, Mistral, Qwen,
Gemma, Phi, Falcon, GPT-NeoX/J, GPT-2, StarCoder, OPT, BLOOM, StableLM, OLMo, Cohere, DeepSeek, Granite,
GLM4, gpt-oss): the hyper-parameters of transformers' configuration classes, with the choices each family's
modeling_*.py makes written out as fields (biases, norm kind, gated MLP, parallel blocks, mixture of
experts, sliding windows, multi-head latent attention).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from advisor.core.errors import SpecError

if TYPE_CHECKING:
    from advisor.core.llm.stored import StoredWeights

NormKind = Literal["rms", "layer", "layer_nobias", "layer_noparam", "cohere"]  # cohere: CohereLayerNorm
Activation = Literal["silu", "gelu", "gelu_tanh", "gelu_new", "relu"]  # gelu_new: the Python composite
QKNorm = Literal["none", "head", "full"]


@dataclass(frozen=True)
class MoESpec:
    """A mixture-of-experts MLP: a router picks experts_per_token of `experts` gated MLPs for each token;
    shared experts (DeepSeek, Qwen2-MoE) run for every token."""

    experts: int
    experts_per_token: int
    expert_intermediate: int
    shared_intermediate: int = 0  # total width of the always-on shared MLP (0 = none)
    shared_gate: bool = False  # Qwen2-MoE: sigmoid(Linear(hidden, 1)) scales the shared expert
    router_bias: bool = False  # gpt-oss
    expert_bias: bool = False  # gpt-oss: biases on gate_up and down of each expert
    dense_layers: tuple[int, ...] = ()  # layers with a dense MLP of `intermediate` instead
    # Qwen2/3-MoE and OLMoE routers cast the top-k weights back to the logits' dtype (half under autocast)
    half_routing_weights: bool = False
    clamped_swiglu: bool = False  # gpt-oss: the experts clamp gate and up before a sigmoid-weighted GLU


@dataclass(frozen=True)
class MLASpec:
    """DeepSeek V2/V3 multi-head latent attention (modeling_deepseek_v2.py): keys and values are rebuilt from
    a compressed latent of kv_lora_rank plus one shared rotary key, which is all the KV cache stores."""

    kv_lora_rank: int
    q_lora_rank: int  # 0: queries projected directly from the hidden state (V2-Lite)
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int

    @property
    def qk_head_dim(self) -> int:
        return self.qk_nope_head_dim + self.qk_rope_head_dim


@dataclass(frozen=True)
class DecoderSpec:
    name: str
    model_type: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int  # may differ from hidden / heads (Gemma: 256)
    intermediate: int
    vocab: int
    tied_embeddings: bool = False
    gated_mlp: bool = True  # SwiGLU/GeGLU: down(act(gate(x)) * up(x)); else fc2(act(fc1(x)))
    activation: Activation = "silu"
    norm: NormKind = "rms"
    norms_per_layer: int = 2  # 1: parallel blocks sharing one norm; 4: Gemma 2/3, GLM4 post-norms too
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    lm_head_bias: bool = False
    qk_norm: QKNorm = "none"  # head: one norm of head_dim (Qwen3, Gemma 3); full: over all heads (OLMo 2)
    embed_norm: bool = False  # BLOOM: word_embeddings_layernorm
    final_norm: bool = True
    learned_positions: int = 0  # rows of a learned position table (GPT-2, OPT, BigCode); 0 = rotary/ALiBi
    parallel_block: bool = False  # attention and MLP read the same input (GPT-J, NeoX, Falcon, Cohere)
    sliding_window: int = 0  # tokens a sliding-window layer attends to (0 = none)
    sliding_layers: tuple[bool, ...] = ()  # per layer: True where the window applies (() = every layer)
    attention_sinks: bool = False  # gpt-oss: one learned logit per head
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    eager_attention: bool = False  # no SDPA support in transformers (Gemma 2, gpt-oss): scores materialised
    # the runtime's own fused attention (vLLM's backends: runtime.py vllm_profile_spec), in every dtype
    own_attention_kernel: bool = False
    attn_softcap: bool = False  # Gemma 2: tanh soft-capping of the attention scores
    embed_scaled: bool = False  # Gemma: hidden = inputs_embeds * sqrt(hidden), a new tensor beside inputs_embeds
    logits_scaled: bool = False  # Granite divides, Cohere multiplies the LM head's logits by a constant
    final_softcap: bool = False  # Gemma 2/3 final_logit_softcapping: logits / cap, tanh, * cap
    max_positions: int | None = None  # longest sequence the model accepts, where the positions are learned
    rotary_dim: int | None = None  # dims of each head that rotate (partial_rotary_factor, rotary_dim); None: all
    fused_qkv: bool = False  # one qkv_proj Linear (Phi-3)
    fused_gate_up: bool = False  # one gate_up_proj Linear (Phi-3, GLM4)
    # how the checkpoint this description was read from stores its weights (Hub quantization_config, GGUF)
    stored: StoredWeights | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in ("hidden", "layers", "heads", "kv_heads", "head_dim", "intermediate", "vocab"):
            if getattr(self, name) < 1:
                raise SpecError(f"{self.name}: {name} must be at least 1, got {getattr(self, name)}")
        if self.heads % self.kv_heads:
            raise SpecError(
                f"{self.name}: num_attention_heads {self.heads} must be a multiple of "
                f"num_key_value_heads {self.kv_heads}"
            )
        if self.sliding_layers and len(self.sliding_layers) != self.layers:
            raise SpecError(f"{self.name}: {len(self.sliding_layers)} layer types for {self.layers} layers")

    def is_sliding(self, layer: int) -> bool:
        if not self.sliding_window:
            return False
        return self.sliding_layers[layer] if self.sliding_layers else True

    def is_moe_layer(self, layer: int) -> bool:
        return self.moe is not None and layer not in self.moe.dense_layers

    def eager_mask_elements(self, seq_len: int) -> int:
        """Per sample: the 4-D additive masks transformers builds for eager attention (masking_utils: one
        (seq, seq) float mask per attention kind, full and sliding), alive through the base model."""
        if not self.eager_attention:
            return 0
        return len({self.is_sliding(i) for i in range(self.layers)}) * seq_len * seq_len

    def sdpa_mask_bytes(self, seq_len: int) -> int:
        """The boolean (seq, seq) mask masking_utils.sdpa_mask builds, shared by the batch, where a sliding
        window shorter than the sequence stops it from leaving the causal mask to the kernel
        (_ignore_causal_mask_sdpa); full-attention layers need none."""
        if self.eager_attention or not self.sliding_window or seq_len < self.sliding_window:
            return 0
        return seq_len * seq_len if any(self.is_sliding(i) for i in range(self.layers)) else 0

    @property
    def rotary_width(self) -> int:
        """Width of the rotary cos/sin tables: the rotated dims of a head (DeepSeek: the shared rope key);
        0 with learned positions or ALiBi (BLOOM)."""
        if self.learned_positions or self.model_type == "bloom":
            return 0
        if self.mla is not None:
            return self.mla.qk_rope_head_dim
        return self.head_dim if self.rotary_dim is None else self.rotary_dim
