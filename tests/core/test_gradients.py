"""One rule for what autograd tracks, shared by the memory replay and the per-layer backward FLOPs."""

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.gradients import requires_grad, trainable_params
from advisor.core.llm.lora import with_adapters
from advisor.core.loss_head import step_graph
from advisor.core.replay import step_plan
from advisor.core.workload import Workload

FULL = Workload("train", 1, "amp_bf16", "adamw")
LORA = Workload("train", 1, "amp_bf16", "adamw", finetune="lora", weights="bf16")


def flags(workload: Workload) -> dict[str, bool]:
    graph = zoo.build("llama-3.1-8b", 64)
    graph = step_graph(with_adapters(graph, workload) if workload.adapters else graph, workload)
    assert step_plan(graph, workload).requires_grad == requires_grad(graph, workload)  # the replay's rule
    return {node.name: flag for node, flag in zip(graph.nodes, requires_grad(graph, workload), strict=True)}


def test_a_frozen_base_is_not_tracked_until_the_first_adapter() -> None:
    full, lora = flags(FULL), flags(LORA)
    assert not full["input_ids"] and not lora["input_ids"]  # int64 token ids never require grad
    assert full["embed_tokens"] and full["layers.0.input_layernorm"]
    assert not lora["embed_tokens"] and not lora["layers.0.input_layernorm"]  # frozen, nothing upstream trains
    assert lora["layers.0.self_attn.q_proj"] and lora["lm_head"]  # the first adapter, and all after it


def test_layer_rows_follow_the_same_rule() -> None:
    bare = zoo.build("llama-3.1-8b", 64)
    rows = {r.name: r for r in estimate(bare, LORA).layers}  # the estimate adapts the graph itself
    graph = with_adapters(bare, LORA)
    q_proj = next(n for n in graph.nodes if n.name == "layers.0.self_attn.q_proj")
    inputs = graph.input_specs(q_proj)
    # its input (the frozen norm's output) needs no gradient, so backward computes only the adapters' weight
    # gradients: half of what it would with the input's gradient too (batch 1)
    assert rows[q_proj.name].backward_flops == q_proj.op.backward_flops(inputs, q_proj.output, False)
    assert 2 * rows[q_proj.name].backward_flops == q_proj.op.backward_flops(inputs, q_proj.output, True)
    norm = next(n for n in graph.nodes if n.name == "layers.0.input_layernorm")
    norm_inputs = graph.input_specs(norm)
    assert trainable_params(norm.op, norm_inputs, LORA) == 0 < trainable_params(norm.op, norm_inputs, FULL) == 4096
