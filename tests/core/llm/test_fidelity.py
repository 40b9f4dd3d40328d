"""What the analytic graph follows of the real transformers step, each checked against the arithmetic of
what PyTorch allocates (the simulated path agrees with these on the tiny corpus, benchmarks/hf_corpus.py)."""

from dataclasses import replace

from advisor.core.analytic import estimate
from advisor.core.graph import GraphBuilder, TensorSpec
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.graph import decoder_graph
from advisor.core.ops import Attention, Input, Linear
from advisor.core.ops.moe import MoEExperts
from advisor.core.tracker import rounded
from advisor.core.workload import Workload

SPEC = DecoderSpec("tiny", "llama", hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, intermediate=128, vocab=1000)


def test_inference_mode_keeps_no_weight_cast_beyond_its_op() -> None:
    b = GraphBuilder("two linears")
    x = b.add(Input((1000,)), [], "x")
    x = b.add(Linear(1000), [x], "first")
    b.add(Linear(1000), [x], "second")
    m = estimate(b.build(), Workload("infer", 1, "amp_bf16")).memory
    # autocast caches no cast under inference_mode (PyTorch >= 2.11): at most one layer's half weights
    # (1000*1000 + 1000 parameters x 2 bytes) and the first layer's half input (1000 x 2 bytes) at once
    assert m.at_peak.temporaries == rounded(2 * 1001000) + rounded(2 * 1000)


def test_granite_and_cohere_scale_a_second_copy_of_the_logits() -> None:
    plain, scaled = (
        estimate(decoder_graph(s, 128), Workload("infer", 4, "amp_bf16")).memory
        for s in (SPEC, replace(SPEC, logits_scaled=True))
    )
    logits = rounded(4 * 128 * 1000 * 2)  # batch x seq x vocab, bf16
    assert scaled.peak_layer == "logits_scale"
    assert scaled.at_peak.activations >= 2 * logits
    assert scaled.peak_bytes > plain.peak_bytes


def test_grouped_gemm_experts_workspace_follows_the_routed_rows() -> None:
    op = MoEExperts(experts=4, experts_per_token=2, intermediate=128)
    hidden, logits = TensorSpec((128, 64), "float"), TensorSpec((128, 4), "float")
    out = op.output_spec([hidden, logits], "experts")
    # 128 tokens x 2 experts = 256 routed rows; the output and the input's cast (128 x 64 each) are counted
    # apart; 16 half elements a row of router and sort indices (32 bytes)
    assert op.forward_workspace([hidden, logits], out, saving=False) == 256 * (3 * 64 + 4 * 128 + 16) - 2 * 128 * 64
    assert op.forward_workspace([hidden, logits], out, saving=True) == 256 * (2 * 64 + 3 * 128) - 128 * 64
    saved = {t.what: t.numel for t in op.extra_saved([hidden, logits], out, True)}
    assert saved["expert activations"] == 256 * 4 * 128  # gate_up (2 x 128), act(gate), the product
    assert saved["gathered rows"] == saved["expert outputs"] == 256 * 64


def test_eager_attention_keeps_the_fp32_softmax_and_its_half_copy() -> None:
    op = Attention(heads=4, kv_heads=2, causal=True, kernel="eager", softcap=True)
    q, kv = TensorSpec((128, 64), "float"), TensorSpec((128, 32), "float")
    out = op.output_spec([q, kv, kv], "sdpa")
    probs = 4 * 128 * 128  # heads x seq_q x seq_k
    saved = {t.what: (t.numel, t.dtype) for t in op.extra_saved([q, kv, kv], out, True)}
    assert saved == {
        "fp32 softmax": (probs, "float32"),
        "half probabilities": (probs, "act"),
        "soft-capped scores": (probs, "act"),
    }
    assert op.forward_workspace([q, kv, kv], out, saving=True) == 3 * probs
    # inference: 4P plus repeat_kv's copies at all 4 heads of k (fp32 from the rotary: 2 x 128 x 4 x 16 half
    # elements) and v (128 x 4 x 16), before the output (128 x 4 x 16) exists
    assert op.forward_workspace([q, kv, kv], out, saving=False) == 4 * probs + 3 * 128 * 4 * 16 - 128 * 4 * 16
    assert Attention(heads=4).forward_workspace([q, q, q], out, saving=False) == 0  # fused kernels: none


def test_the_base_model_keeps_its_input_embeddings_until_the_lm_head() -> None:
    graph = decoder_graph(SPEC, 128)
    infer = Workload("infer", 4, "amp_bf16")
    pinned, plain = (
        {p.layer: p.total_bytes for p in estimate(g, infer).timeline} for g in (graph, replace(graph, decoder=None))
    )
    embeds = rounded(4 * 128 * 64 * 4)  # batch x seq x hidden, fp32 (the embedding table's dtype)
    rotary = rounded(2 * 128 * 16 * 4)  # cos and sin, seq x head_dim in fp32, one for the batch
    positions = rounded(8 * 128)  # position ids, int64
    assert pinned["layers.1.add_mlp"] - plain["layers.1.add_mlp"] == embeds + rotary + positions
    assert pinned["lm_head"] == plain["lm_head"]  # released when the base model returns


def test_eager_attention_masks_one_per_attention_kind() -> None:
    eager = replace(SPEC, eager_attention=True)
    assert eager.eager_mask_elements(128) == 128 * 128  # every layer full attention: one mask
    mixed = replace(eager, sliding_window=64, sliding_layers=(True, False))
    assert mixed.eager_mask_elements(128) == 2 * 128 * 128  # full and sliding
    assert SPEC.eager_mask_elements(128) == 0  # SDPA's causal kernels take no mask tensor


def test_bloom_locals_keep_the_scores_and_their_masked_sum() -> None:
    op = Attention(heads=8, kernel="eager", scores_held=True)
    q = TensorSpec((128, 64), "float")
    out = op.output_spec([q, q, q], "sdpa")
    probs = 8 * 128 * 128
    # half scores (1P) + fp32 masked sum (2P) + fp32 softmax (2P) + half probabilities (1P), in half elements,
    # and the contiguous copies of q, k, v (3 x 128 x 64), before the output (128 x 64) exists
    assert op.forward_workspace([q, q, q], out, saving=False) == 6 * probs + 3 * 128 * 64 - 128 * 64
    assert op.forward_workspace([q, q, q], out, saving=True) == 3 * probs


def test_gelu_new_is_the_python_composite() -> None:
    from advisor.core.llm.families_gpt import gelu_kind

    assert [gelu_kind(n) for n in ("gelu_new", "gelu_pytorch_tanh", "gelu")] == ["gelu_new", "gelu_tanh", "gelu"]
    kinds = {n.op.kind for n in decoder_graph(replace(SPEC, gated_mlp=False, activation="gelu_new"), 8).nodes}
    assert "gelu_tanh_composite" in kinds


def test_attention_sinks_widen_the_eager_softmax_by_one_column() -> None:
    op = Attention(heads=4, kv_heads=4, causal=True, kernel="eager", sinks=True)
    q = TensorSpec((128, 64), "float")
    out = op.output_spec([q, q, q], "sdpa")
    probs, widened = 4 * 128 * 128, 4 * 128 * 129  # heads x seq_q x seq_k, and with the sink column
    # inference: fp32 masked scores (2P half elements), shifted logits and softmax (2P' each), half copy (P),
    # before the output (128 x 64) exists
    assert op.forward_workspace([q, q, q], out, saving=False) == 2 * probs + 4 * widened + probs - 128 * 64


def test_gelu_new_in_inference_holds_half_x_at_its_final_multiply() -> None:
    from advisor.core.ops.text_ops import GELUTanhComposite

    x = TensorSpec((128, 256), "float")
    op = GELUTanhComposite()
    # a = 0.5*x, one element per output element in x's own dtype (bf16 under autocast: the replay sizes it by
    # the input's dtype), while b = 1 + tanh (fp32) stands where pow's fp32 copy of x was: 128 x 256
    assert op.input_dtype_workspace
    assert op.forward_workspace([x], x, saving=False) == 128 * 256
    assert op.forward_workspace([x], x, saving=True) == 0  # training counts t, a, b as saved
    # without autocast (fp32) there is no copy of x: a and b, two fp32 elements each: 2 x 128 x 256
    assert op.for_dtype(4, False).forward_workspace([x], x, saving=False) == 2 * 128 * 256


def test_narrow_experts_peak_at_the_scaled_and_unpermuted_rows() -> None:
    hidden, logits = TensorSpec((128, 64), "float"), TensorSpec((128, 4), "float")
    fp32, half = (MoEExperts(experts=4, experts_per_token=2, intermediate=16, half_weights=h) for h in (False, True))
    out = fp32.output_spec([hidden, logits], "experts")
    # end of grouped_mm_experts_forward, per routed row (256): gathered fp32 rows (2 x 64), the down GEMM's half
    # output (64), then scaled and un-permuted rows: fp32 (2 x 2 x 64) with fp32 routing weights (DeepSeek V2,
    # Mixtral), half (2 x 64) with half ones (Qwen-MoE, OLMoE, DeepSeek V3); 20 half elements of indices
    assert fp32.forward_workspace([hidden, logits], out, saving=False) == 256 * (3 * 64 + 4 * 64 + 20) - 2 * 128 * 64
    assert half.forward_workspace([hidden, logits], out, saving=False) == 256 * (3 * 64 + 2 * 64 + 20) - 2 * 128 * 64


def test_the_causal_lm_keeps_the_final_norm_output_beside_the_scaled_logits() -> None:
    scaled = replace(SPEC, logits_scaled=True)
    m = estimate(decoder_graph(scaled, 128), Workload("infer", 4, "amp_bf16")).memory
    logits, norm = rounded(4 * 128 * 1000 * 2), rounded(4 * 128 * 64 * 4)  # bf16 logits, fp32 hidden states
    assert m.peak_layer == "logits_scale"
    assert m.at_peak.activations == 2 * logits + norm


def test_cohere_layer_norm_saves_two_centred_copies_and_the_product() -> None:
    from advisor.core.ops import LayerNorm

    x = TensorSpec((128, 64), "float")
    saved = {t.what: (t.numel, t.dtype) for t in LayerNorm(bias=False, composite=True).extra_saved([x], x, True)}
    # (x - mean) twice, the normalised product: 128 x 64 fp32 each; rsqrt one per row (128)
    assert saved == {
        "x - mean, for pow": (128 * 64, "float32"),
        "x - mean, for the product": (128 * 64, "float32"),
        "rsqrt": (128, "float32"),
        "normalised": (128 * 64, "float32"),
    }
    assert LayerNorm(bias=False, composite=True).saved_inputs() == ()  # the fp32 input itself is not kept
    assert LayerNorm().saved_inputs() == (0,)


def test_gemma2_final_soft_capping_keeps_tanh_of_the_logits_for_backward() -> None:
    capped = replace(SPEC, final_softcap=True)
    graph = decoder_graph(capped, 128)
    assert [n.name for n in graph.nodes][-3:] == ["logits_softcap_div", "logits_softcap_tanh", "logits_softcap_mul"]
    train = Workload("train", 4, "amp_bf16", "adamw")
    plain_m, capped_m = (estimate(decoder_graph(s, 128), train).memory for s in (SPEC, capped))
    logits = rounded(4 * 128 * 1000 * 2)  # batch x seq x vocab, bf16
    # tanh's result is saved for backward and the capped logits replace the LM head's as the model output
    assert capped_m.peak_bytes - plain_m.peak_bytes >= logits


def test_rotary_outputs_are_fp32_under_autocast_and_eager_attention_drops_its_casts_early() -> None:
    gemma2 = replace(SPEC, eager_attention=True)
    graph = decoder_graph(gemma2, 128)
    infer = Workload("infer", 4, "amp_bf16")
    from advisor.core.replay import replay_step

    m = replay_step(graph, infer)
    names = [n.name for n in graph.nodes]
    rotary_q = names.index("layers.0.self_attn.rotary_q")
    # q * cos with cos in the fp32 hidden dtype: 4 x 128 x 64 x 4 bytes
    assert next(size for key, size in m.events if key == ("out", rotary_q, 0)) == 4 * 128 * 64 * 4
    sdpa = names.index("layers.0.self_attn.sdpa")
    order = [key for key, size in m.events]
    # the half copies of q and k are freed before the eager workspace is taken
    assert order.index(("cast", sdpa, 0), order.index(("cast", sdpa, 0)) + 1) < order.index(("fwd_workspace", sdpa, 0))


def test_gpt_oss_clamped_swiglu_keeps_three_more_expert_tensors() -> None:
    hidden, logits = TensorSpec((128, 64), "float"), TensorSpec((128, 4), "float")
    plain, clamped = (
        MoEExperts(experts=4, experts_per_token=2, intermediate=128, clamped_swiglu=c) for c in (False, True)
    )
    out = plain.output_spec([hidden, logits], "experts")
    saved = [{t.what: t.numel for t in op.extra_saved([hidden, logits], out, True)} for op in (plain, clamped)]
    # 256 routed rows x 128: the clamped gate, sigmoid(alpha * gate) and up + 1 beside gate_up, glu and product
    assert saved[1]["expert activations"] - saved[0]["expert activations"] == 3 * 256 * 128


def test_gelu_new_keeps_half_x_in_the_inputs_dtype() -> None:
    from advisor.core.graph import GraphBuilder as Builder
    from advisor.core.ops.text_ops import GELUTanhComposite
    from advisor.core.replay import replay_step

    b = Builder("fc and gelu_new")
    x = b.add(Input((256,)), [], "x")
    x = b.add(Linear(256), [x], "fc")  # a half output under autocast
    b.add(GELUTanhComposite(), [x], "act")
    m = replay_step(b.build(), Workload("train", 4, "amp_bf16", "sgd"))
    sizes = {key[2]: size for key, size in m.events if key[0] == "extra" and key[1] == 2 and size > 0}
    # t and 1 + t in fp32 (4 x 256 x 4 bytes); 0.5 * x in the Linear's bf16 (4 x 256 x 2)
    assert sizes == {0: rounded(4 * 256 * 4), 1: rounded(4 * 256 * 2), 2: rounded(4 * 256 * 4)}


def test_a_sliding_window_mask_is_converted_to_a_saved_additive_bias() -> None:
    windowed = replace(SPEC, sliding_window=64)
    graph = decoder_graph(windowed, 128)
    sdpa = [n.op for n in graph.nodes if isinstance(n.op, Attention)]
    assert all(op.mask_bias for op in sdpa)
    assert not any(isinstance(n.op, Attention) and n.op.mask_bias for n in decoder_graph(windowed, 32).nodes)
    q, kv = TensorSpec((128, 64), "float"), TensorSpec((128, 32), "float")
    out = sdpa[0].output_spec([q, kv, kv], "sdpa")
    saved = {t.what: (t.numel, t.dtype) for t in sdpa[0].extra_saved([q, kv, kv], out, True)}
    assert saved["additive mask"] == (128 * 128, "act")  # seq_q x seq_k per sample, in the query's half dtype
    # the mask's logical_not (128 x 128 bytes = half as many half elements), and in inference the bias too
    assert sdpa[0].forward_workspace([q, kv, kv], out, saving=True) == 128 * 128 // 2
    assert sdpa[0].forward_workspace([q, kv, kv], out, saving=False) == 128 * 128 // 2 + 128 * 128


def test_llama_rms_norm_keeps_the_normalised_copy_in_its_inputs_dtype() -> None:
    from advisor.core.llm.graph import norm_op
    from advisor.core.ops import RMSNorm

    x = TensorSpec((128, 64), "float")
    llama, gemma = norm_op(SPEC), norm_op(replace(SPEC, model_type="gemma2"))
    assert isinstance(llama, RMSNorm) and isinstance(gemma, RMSNorm)
    # self.weight * hidden_states.to(input_dtype): a half input keeps a half copy; Gemma keeps fp32 (the op's)
    assert [t.dtype for t in llama.extra_saved([x], x, True)] == ["input", "float32"]
    assert [t.dtype for t in gemma.extra_saved([x], x, True)] == ["act", "float32"]


def test_fused_projections_cast_their_shared_input_once() -> None:
    fused = replace(SPEC, fused_qkv=True, fused_gate_up=True)
    graph = decoder_graph(fused, 128)
    names = [n.name for n in graph.nodes]
    assert "layers.0.self_attn.qkv_proj" in names and "layers.0.mlp.gate_up_proj" in names
    assert graph.param_count == decoder_graph(SPEC, 128).param_count  # the same weights, one matrix
    train = Workload("train", 4, "amp_bf16", "adamw")
    kept = [sum(estimate(decoder_graph(s, 128), train).memory.at_peak.as_dict().values()) for s in (SPEC, fused)]
    # per layer, k_proj, v_proj and up_proj no longer keep their own half copy of the norm's output:
    # 3 x 4 x 128 x 64 x 2 bytes, and v is a view of the fused q/k/v output (4 x 128 x (64 + 32 + 32) x 2)
    # instead of a 4 x 128 x 32 tensor of its own
    per_layer = 3 * 4 * 128 * 64 * 2 - (4 * 128 * 128 * 2 - 4 * 128 * 32 * 2)
    assert kept[0] - kept[1] == 2 * per_layer


def test_flash_output_in_q_layout_is_the_tensor_o_proj_reads() -> None:
    sdpa = next(n.op for n in decoder_graph(SPEC, 128).nodes if isinstance(n.op, Attention))
    assert sdpa.token_major and sdpa.saves_result()
    q, kv = TensorSpec((128, 64), "float"), TensorSpec((128, 32), "float")
    out = sdpa.output_spec([q, kv, kv], "sdpa")
    # only the log-sum-exp (4 heads x 128 rows, fp32) beside the output itself; no second (128 x 64) copy
    assert {t.what: t.numel for t in sdpa.extra_saved([q, kv, kv], out, True)} == {"log-sum-exp": 4 * 128}
    windowed = next(
        n.op for n in decoder_graph(replace(SPEC, sliding_window=64), 128).nodes if isinstance(n.op, Attention)
    )
    assert not windowed.token_major  # masked: the memory-efficient kernel, counted with its own output copy


def test_fp32_grouped_query_attention_takes_the_math_path() -> None:
    gqa = Attention(heads=4, kv_heads=2, causal=True, token_major=True, enable_gqa=True)
    assert gqa.for_dtype(2, True) is gqa  # half: flash takes fewer K/V heads
    math = gqa.for_dtype(4, False)  # fp32: flash needs half, memory-efficient refuses enable_gqa
    assert math.kernel == "math" and Attention(heads=4).for_dtype(4, False).kernel == "fused"
    q, kv = TensorSpec((128, 64), "float"), TensorSpec((128, 32), "float")
    out = math.output_spec([q, kv, kv], "sdpa")
    # inference at the softmax: scores and softmax (2 x 4 x 128 x 128), repeated K, V and scaled q
    # (3 x 128 x 64), the causal mask (128 x 128 bytes = a quarter element each), before the output (128 x 64)
    assert math.forward_workspace([q, kv, kv], out, saving=False) == (
        2 * 4 * 128 * 128 + 3 * 128 * 64 + 128 * 128 // 4 - 128 * 64
    )


def test_fp32_experts_count_every_tensor_as_one_element() -> None:
    hidden, logits = TensorSpec((128, 64), "float"), TensorSpec((128, 4), "float")
    op = MoEExperts(experts=4, experts_per_token=2, intermediate=16).for_dtype(4, False)
    out = op.output_spec([hidden, logits], "experts")
    # 256 routed rows at the end: gathered, down output, scaled and un-permuted rows (4 x 64) and 40 bytes of
    # indices (10 fp32 elements); the output (128 x 64) is counted apart
    assert op.forward_workspace([hidden, logits], out, saving=False) == 256 * (4 * 64 + 10) - 128 * 64


def test_fp32_eager_attention_has_no_half_copies() -> None:
    op = Attention(heads=4, kv_heads=2, causal=True, kernel="eager").for_dtype(4, False)
    q, kv = TensorSpec((128, 64), "float"), TensorSpec((128, 32), "float")
    out = op.output_spec([q, kv, kv], "sdpa")
    probs = 4 * 128 * 128
    assert [t.what for t in op.extra_saved([q, kv, kv], out, True)] == ["fp32 softmax"]  # .to(fp32) is a no-op
    assert op.forward_workspace([q, kv, kv], out, saving=True) == 2 * probs  # scores and their masked sum
    # inference, in fp32 elements: masked sum and softmax (2P), K and V repeated to 4 heads (2 x 128 x 64)
    assert op.forward_workspace([q, kv, kv], out, saving=False) == 2 * probs + 2 * 128 * 64 - 128 * 64
    falcon = Attention(heads=4, kv_heads=1, causal=True, token_major=True)  # broadcast K/V, no enable_gqa
    assert falcon.for_dtype(4, False).kernel == "fused"


def test_gelu_new_in_fp32_holds_both_factors_of_its_last_multiply() -> None:
    from advisor.core.ops.text_ops import GELUTanhComposite

    x = TensorSpec((128, 256), "float")
    # no autocast copy of x: a = 0.5*x and b = 1 + tanh, two fp32 elements per output element
    assert GELUTanhComposite().for_dtype(4, False).forward_workspace([x], x, saving=False) == 2 * 128 * 256
