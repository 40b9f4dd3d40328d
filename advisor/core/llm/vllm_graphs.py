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
  half precision: an fp32 model runs FlexAttention or Triton attention, without them; MLA models run
  FlashMLA, whose own buffers are not modelled.
Memory outside PyTorch (vLLM's profile logs it as "non-torch memory": CUDA libraries' module code and
handles loaded after the worker's first snapshot, and the communicators of a split engine: NCCL's
per-channel buffers, the custom all-reduce's IPC buffers, FlashInfer's all-reduce fusion workspace under
tensor parallel) has no formula per part here: NON_TORCH_* are the medians of the logs below.

Fitted on llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs @d3121e059da8 (H100 80GB, 2026-04):
GRAPH_BYTES_PER_LAYER_GRAPH is the median over 44 dense-model logs of (graph memory - pool) / (layers x
graphs); left out one model family at a time the median moves by under 1% (benchmarks/llm_memory.py
prints it). Mixture-of-experts layers launch more kernels (router, top-k, token sorting, two grouped GEMMs)
and gpt-oss's MXFP4 kernels more still: their graphs are under-counted (gpt-oss-20b: 0.75 GiB against
1.84 logged). The constants are the H100's; other cards run FlashAttention 2 and other kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.llm.decoder import DecoderSpec

F32 = 4
GIB = 2**30
CAPTURE_SIZES = (1, 2, 4, *range(8, 256, 8), *range(256, 513, 16))
MAX_CAPTURE_TOKENS = 512
FA_SPLITS_FOR_GRAPHS = 32
GRAPH_BYTES_PER_LAYER_GRAPH = 199_000  # fitted (module docstring): ~20 kernel nodes x ~10 KB
# non-torch memory in the 0.19.0 logs: one card (45 logs, 0.24-0.27 GiB), tensor parallel 2 and 4 (19 logs,
# 2.06-2.21 GiB), pipeline stages (2 logs, 0.07 GiB: those workers take their first snapshot later)
NON_TORCH_ONE_CARD_BYTES = round(0.25 * GIB)
NON_TORCH_TENSOR_PARALLEL_BYTES = round(2.09 * GIB)
NON_TORCH_STAGE_BYTES = round(0.07 * GIB)


def capture_sizes(limit: int) -> int:
    """How many of the default capture sizes are at most `limit`."""
    return sum(1 for size in CAPTURE_SIZES if size <= limit)


@dataclass(frozen=True)
class VLLMEngineShape:
    """The card-independent inputs of vLLM's per-card graph and non-torch bytes under any plan."""

    layers: int
    graphs: int  # graphs captured per layer: piecewise sizes + full decode sizes (0 under --enforce-eager)
    split_activation_bytes: int  # the largest capture's activations that tensor parallel divides (heads, MLP)
    whole_activation_bytes: int  # and those it does not (hidden-sized tensors)
    accumulator_bytes: int  # FlashAttention 3's split-KV accumulators at one card (divide by tensor ways)

    def graph_bytes(self, tensor_ways: int = 1, stages: int = 1) -> int:
        """The CUDA graphs on the busiest card: its layers' executables and the pool."""
        if self.graphs == 0:
            return 0
        layers = -(-self.layers // stages)
        pool = self.whole_activation_bytes + (self.split_activation_bytes + self.accumulator_bytes) // tensor_ways
        return layers * self.graphs * GRAPH_BYTES_PER_LAYER_GRAPH + pool

    def non_torch_bytes(self, tensor_ways: int = 1, stages: int = 1) -> int:
        if tensor_ways > 1:
            return NON_TORCH_TENSOR_PARALLEL_BYTES
        return NON_TORCH_STAGE_BYTES if stages > 1 else NON_TORCH_ONE_CARD_BYTES

    def held_bytes(self, tensor_ways: int = 1, stages: int = 1) -> int:
        return self.graph_bytes(tensor_ways, stages) + self.non_torch_bytes(tensor_ways, stages)


def vllm_engine_shape(spec: DecoderSpec, dtype_bytes: int, max_num_seqs: int, enforce_eager: bool) -> VLLMEngineShape:
    """The engine of `spec` computing in dtype_bytes with max_num_seqs sequences (cudagraph_capture_sizes:
    piecewise up to min(2 x max_num_seqs, 512) tokens, full decode graphs up to min(max_num_seqs, 512))."""
    largest = min(2 * max_num_seqs, MAX_CAPTURE_TOKENS)
    decode = min(max_num_seqs, MAX_CAPTURE_TOKENS)
    graphs = 0 if enforce_eager else capture_sizes(largest) + capture_sizes(decode)
    width = spec.moe.expert_intermediate * spec.moe.experts_per_token if spec.moe else spec.intermediate
    flash = dtype_bytes < F32 and spec.mla is None
    accumulators = FA_SPLITS_FOR_GRAPHS * decode * spec.heads * (spec.head_dim + 1) * F32 if flash else 0
    return VLLMEngineShape(
        layers=spec.layers,
        graphs=graphs,
        split_activation_bytes=largest * 3 * width * dtype_bytes,  # gate_up (2 x width) and the activation
        whole_activation_bytes=largest * 3 * spec.hidden * dtype_bytes,  # residual, normed input, o_proj output
        accumulator_bytes=accumulators,
    )
