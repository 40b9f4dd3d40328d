"""What vLLM 0.17-0.19 (V1) holds on each card besides the weights, the profiled activations and the KV
cache: its CUDA graphs and the memory its libraries take outside PyTorch's allocator. Both differ per plan
(tensor parallel splits the attention heads and adds communicators; a pipeline stage captures its own
layers), so an estimate keeps their shape (VLLMEngineShape) and a plan asks it for one card's bytes.

CUDA graphs (vllm/config/compilation.py, gpu_model_runner.capture_model; vllm 0.19.0): with the default
cudagraph_mode FULL_AND_PIECEWISE, every capture size gets a piecewise graph set (one graph per piece
between attention ops, about one per layer: vllm/compilation/cuda_graph.py CUDAGraphWrapper) and every
decode batch up to max_num_seqs a full graph of the whole forward. The sizes are 1, 2, 4, 8 to 248 by 8,
256 to max_cudagraph_capture_size by 16, and that maximum is min(2 x max_num_seqs, 512). What they hold:
- the executable graphs: the driver keeps device memory for each kernel node, "around 10KB per kernel
  node" (NVIDIA/cccl PR 3768, 2025-02-11); a decoder layer launches some 20 kernels per graph (GEMMs, the
  fused norms, rotary, activation, cache write and attention in the full graphs), so the bytes grow with
  layers x graphs. GRAPH_BYTES_PER_LAYER_GRAPH is fitted (see below), and is about 20 nodes x 10 KB;
- the graph pool, shared by all graphs and reused between captures: the largest capture's activations,
  and in the full decode graphs FlashAttention 3's split-KV accumulators, pre-allocated for
  flash_attn_max_num_splits_for_cuda_graph = 32 splits (vllm/config/attention.py; the FA3 backend's
  "large enough intermediate buffers are pre-allocated during capture"): 32 x tokens x heads x
  (head_dim + 1) fp32 values (out_accum and softmax_lse_accum, hopper/flash_api.cpp). FlashAttention needs
  half precision: an fp32 model runs FlexAttention or Triton attention, without them. MLA models on the H100
  run FLASH_ATTN_MLA ("Using FLASH_ATTN_MLA attention backend", DeepSeek-V2-Lite's 0.19.0 log), FlashAttention
  3 over the latent cache with the same 32 splits (v1/attention/backends/mla/flashattn_mla.py): the values
  are the kv_lora_rank latent, so 32 x tokens x heads x (kv_lora_rank + 1) fp32 (512 MiB for V2-Lite's 512
  sequences, 16 heads, rank 512; its log's first full capture took 522 MiB).
Memory outside PyTorch (vLLM's profile logs it as "non-torch memory": CUDA libraries' module code and
handles loaded after the worker's first snapshot, and the communicators of a split engine: NCCL's
per-channel buffers, the custom all-reduce's IPC buffers, FlashInfer's all-reduce fusion workspace under
tensor parallel) has no formula per part here: NON_TORCH_* are the medians of the logs below.

Model-specific captures (vLLM 0.19.0, logged in the runs below):
- gpt-oss (GptOssForCausalLMConfig, vllm/model_executor/models/config.py) raises the largest capture to 1,024
  tokens: "Overriding max cuda graph capture size to 1024 for performance.", then "PIECEWISE=83
  (largest=1024), FULL=83 (largest=1024)" at 1,024 sequences;
- Llama 4's chunked local attention supports no full graph ("CUDAGraphMode.FULL_AND_PIECEWISE is not
  supported with ChunkedLocalAttention_8192_FlashAttentionBackend backend (support: AttentionCGSupport.NEVER);
  setting cudagraph_mode=PIECEWISE"): piecewise graphs only, no split-KV accumulators;
- FlashAttention 3 splits no batch of more than 992 sequences ("disable split for varlen and >992 batches",
  hopper/flash_api.cpp PREPARE_VARLEN_MAX_BATCHES_1CTA = 992): the accumulators are those of the largest full
  graph of at most 992 sequences. gpt-oss's log shows it: its FULL capture of 1,024 sequences took 6 MiB, and
  the whole capture 0.54 GiB more than vLLM's estimate from the 1,024 and 1,008 captures.
Mixture-of-experts layers launch more kernels per graph than a dense MLP (gate_up GEMM, activation, down
GEMM), each kept as a node of about 10 KB (BYTES_PER_KERNEL_NODE): vLLM's Triton experts (fused_moe.py
TritonExperts.apply, csrc/moe/moe_align_sum_kernels.cu) add the router GEMM, topk_softmax,
moe_align_block_size_kernel, count_and_sort_expert_tokens_kernel and moe_sum, the two fused_moe_kernel launches
and the activation taking the dense kernels' places; gpt-oss's MXFP4 experts on Hopper (the 'TRITON' Mxfp4
backend, gpt_oss_triton_kernels_moe.py over triton_kernels) add the router GEMM, _topk_forward,
sum_bitmatrix_rows, _combined_routing_memset, _combined_routing_compute and the second matmul_ogs's
_finalize_matmul, with the SwiGLU fused into the first matmul_ogs (one kernel fewer); shared experts add their
own gate_up GEMM, activation, down GEMM and the add to the routed output, a shared gate its GEMM and the
sigmoid-multiply.

Fitted on llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs @d3121e059da8 (H100 80GB, 2026-04):
GRAPH_BYTES_PER_LAYER_GRAPH is the median over 43 dense-model logs of (graph memory - pool) / (layers x
graphs); left out one model family at a time the median moves by under 1% (benchmarks/llm_memory.py
prints it). The MoE kernel counts are not fitted; benchmarks/llm_memory.py prints each MoE log beside them
(Qwen3-30B-A3B and Mixtral land within 1%; gpt-oss-20b's layers hold some 90 KB a layer-graph more than their
kernels explain, DeepSeek-V2-Lite's MLA layers some 120 KB, Llama 4 Scout's piecewise-only ones some 200 KB).
The constants are the H100's; other cards run FlashAttention 2 and other kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.llm.decoder import DecoderSpec

F32 = 4
GIB = 2**30
CAPTURE_SIZES = (1, 2, 4, *range(8, 256, 8), *range(256, 1025, 16))
MAX_CAPTURE_TOKENS = 512
GPT_OSS_MAX_CAPTURE_TOKENS = 1024  # GptOssForCausalLMConfig (module docstring)
FA_SPLITS_FOR_GRAPHS = 32
FA_SPLIT_MAX_BATCH = 992  # hopper/flash_api.cpp PREPARE_VARLEN_MAX_BATCHES_1CTA: no split above it
GRAPH_BYTES_PER_LAYER_GRAPH = 199_000  # fitted (module docstring): ~20 kernel nodes x ~10 KB
BYTES_PER_KERNEL_NODE = 10_000  # "around 10KB per kernel node" (NVIDIA/cccl PR 3768)
# kernels an MoE layer launches beyond a dense MLP's three (module docstring)
TRITON_EXPERTS_EXTRA_KERNELS = 5  # router GEMM, topk_softmax, align, count_and_sort, moe_sum
MXFP4_EXPERTS_EXTRA_KERNELS = 5  # router GEMM, 4 routing kernels, _finalize_matmul; SwiGLU fused (-1)
SHARED_EXPERT_KERNELS = 4  # gate_up GEMM, activation, down GEMM, the add to the routed output
SHARED_GATE_KERNELS = 2  # the gate's GEMM and the sigmoid-multiply
# non-torch memory in the 0.19.0 logs: one card (45 logs, 0.24-0.27 GiB), tensor parallel 2 and 4 (19 logs,
# 2.06-2.21 GiB), pipeline stages (2 logs, 0.07 GiB: those workers take their first snapshot later)
NON_TORCH_ONE_CARD_BYTES = round(0.25 * GIB)
NON_TORCH_TENSOR_PARALLEL_BYTES = round(2.09 * GIB)
NON_TORCH_STAGE_BYTES = round(0.07 * GIB)


def capture_sizes(limit: int) -> int:
    """How many of the default capture sizes are at most `limit`."""
    return sum(1 for size in CAPTURE_SIZES if size <= limit)


def largest_split_batch(limit: int) -> int:
    """The largest full-graph batch of at most `limit` sequences that FlashAttention 3 still splits."""
    return max((size for size in CAPTURE_SIZES if size <= min(limit, FA_SPLIT_MAX_BATCH)), default=0)


def moe_extra_kernels(spec: DecoderSpec, mxfp4_experts: bool) -> int:
    """Kernels one MoE layer of `spec` launches per graph beyond a dense MLP's (module docstring): the
    experts' routing and reduction, and the shared expert's own MLP."""
    if spec.moe is None:
        return 0
    experts = MXFP4_EXPERTS_EXTRA_KERNELS if mxfp4_experts else TRITON_EXPERTS_EXTRA_KERNELS
    shared = SHARED_EXPERT_KERNELS if spec.moe.shared_intermediate else 0
    return experts + shared + (SHARED_GATE_KERNELS if spec.moe.shared_gate else 0)


@dataclass(frozen=True)
class VLLMEngineShape:
    """The card-independent inputs of vLLM's per-card graph and non-torch bytes under any plan."""

    layers: int
    graphs: int  # graphs captured per layer: piecewise sizes + full decode sizes (0 under --enforce-eager)
    moe_layers: int  # layers with a mixture-of-experts MLP
    moe_extra_kernels: int  # kernels each of them launches per graph beyond a dense MLP's
    split_activation_bytes: int  # the largest capture's activations that tensor parallel divides (heads, MLP)
    whole_activation_bytes: int  # and those it does not (hidden-sized tensors)
    accumulator_bytes: int  # FlashAttention 3's split-KV accumulators at one card (divide by tensor ways)

    def graph_bytes(self, tensor_ways: int = 1, stages: int = 1) -> int:
        """The CUDA graphs on the busiest card: its layers' executables and the pool."""
        if self.graphs == 0:
            return 0
        layers, moe_layers = -(-self.layers // stages), -(-self.moe_layers // stages)
        pool = self.whole_activation_bytes + (self.split_activation_bytes + self.accumulator_bytes) // tensor_ways
        moe = moe_layers * self.graphs * self.moe_extra_kernels * BYTES_PER_KERNEL_NODE
        return layers * self.graphs * GRAPH_BYTES_PER_LAYER_GRAPH + moe + pool

    def non_torch_bytes(self, tensor_ways: int = 1, stages: int = 1) -> int:
        if tensor_ways > 1:
            return NON_TORCH_TENSOR_PARALLEL_BYTES
        return NON_TORCH_STAGE_BYTES if stages > 1 else NON_TORCH_ONE_CARD_BYTES

    def held_bytes(self, tensor_ways: int = 1, stages: int = 1) -> int:
        return self.graph_bytes(tensor_ways, stages) + self.non_torch_bytes(tensor_ways, stages)


def _full_graphs(spec: DecoderSpec) -> bool:
    """Whether vLLM captures full decode graphs of `spec`: Llama 4's chunked local attention allows none."""
    return not (spec.model_type.startswith("llama4") and spec.sliding_window > 0)


def vllm_engine_shape(
    spec: DecoderSpec, dtype_bytes: int, max_num_seqs: int, enforce_eager: bool, mxfp4_experts: bool
) -> VLLMEngineShape:
    """The engine of `spec` computing in dtype_bytes with max_num_seqs sequences (cudagraph_capture_sizes:
    piecewise up to min(2 x max_num_seqs, 512) tokens, gpt-oss's up to 1,024; full decode graphs up to
    max_num_seqs of those), its experts in MXFP4 where mxfp4_experts."""
    gpt_oss = spec.model_type == "gpt_oss"
    largest = GPT_OSS_MAX_CAPTURE_TOKENS if gpt_oss else min(2 * max_num_seqs, MAX_CAPTURE_TOKENS)
    decode = min(max_num_seqs, largest) if _full_graphs(spec) else 0
    graphs = 0 if enforce_eager else capture_sizes(largest) + capture_sizes(decode)
    width = spec.moe.expert_intermediate * spec.moe.experts_per_token if spec.moe else spec.intermediate
    split = largest_split_batch(decode)  # the largest full graph FlashAttention 3 splits
    values = spec.mla.kv_lora_rank if spec.mla else spec.head_dim  # FLASH_ATTN_MLA attends over the latent
    accumulators = FA_SPLITS_FOR_GRAPHS * split * spec.heads * (values + 1) * F32 if dtype_bytes < F32 else 0
    return VLLMEngineShape(
        layers=spec.layers,
        graphs=graphs,
        moe_layers=sum(spec.is_moe_layer(i) for i in range(spec.layers)),
        moe_extra_kernels=moe_extra_kernels(spec, mxfp4_experts),
        split_activation_bytes=largest * 3 * width * dtype_bytes,  # gate_up (2 x width) and the activation
        whole_activation_bytes=largest * 3 * spec.hidden * dtype_bytes,  # residual, normed input, o_proj output
        accumulator_bytes=accumulators,
    )
