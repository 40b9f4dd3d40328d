"""Simplified Chinese for the app's language-model controls (generation, quantized storage, LoRA/QLoRA), the
generation columns of the recommendations and the split-plan explanation. Its own file so parallel edits of
the other catalogues merge cleanly. Terms: 预填充 (prefill), 解码 (decode), KV 缓存, 量化, 适配器."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # workload controls (advisor/ui/workload_panel.py, advisor/ui/workload_llm.py)
    "Generation": "生成",
    "Training keeps activations, gradients and optimizer state; inference only the forward pass; generation "
    "prefills a prompt, then decodes tokens with a KV cache":
        "训练要保存激活值、梯度和优化器状态；推理只做前向；生成先预填充提示，再借助 KV 缓存逐个解码词元",
    "Prompt length": "提示长度", "New tokens": "新生成词元", " tokens": " 个词元",
    "Weights": "权重", "KV cache": "KV 缓存", "Fine-tuning": "微调", "LoRA rank": "LoRA 秩",
    "LoRA targets": "LoRA 目标层",
    "For language models: LoRA adapts the q/k/v/o and gate/up/down projections, and this network has none":
        "用于语言模型：LoRA 适配 q/k/v/o 与 gate/up/down 投影层，而此网络没有这些层",
    "MXFP4 stores the experts of a mixture-of-experts model, and this one has none":
        "MXFP4 只存储混合专家模型的专家层，而此模型没有专家层",
    "{kind}, rank {rank}, adapters in {dtype}": "{kind}，秩 {rank}，适配器为 {dtype}",
    "{kind} rank {rank}": "{kind} 秩 {rank}",
    "gradient checkpointing": "梯度检查点", "no checkpointing": "无梯度检查点",
    "as the precision": "同精度设置", "as the compute dtype": "同计算数据类型",
    "Runtime": "运行时", "as the weights": "随权重格式",
    "What runs the generation, as --runtime: transformers' generate() grows its cache, llama.cpp allocates the "
    "whole context up front, vLLM takes 0.9 of the card; as the weights: GGUF in llama.cpp, others in "
    "transformers":
        "运行生成的程序，同 --runtime：transformers 的 generate() 逐步扩大缓存，llama.cpp 预先分配整个上下文，"
        "vLLM 占用显卡的 0.9；随权重格式：GGUF 用 llama.cpp，其他用 transformers",
    "full (every weight)": "全量（所有权重）",
    "all: {names}": "全部：{names}",
    "Applies to generation only: choose Mode > Generation": "仅适用于生成：请在“模式”中选择“生成”",
    "Applies to training only": "仅适用于训练",
    "Applies to training only: inference and generation run the base model": "仅适用于训练：推理和生成运行的是基座模型",
    "Only with LoRA or QLoRA fine-tuning": "仅在 LoRA 或 QLoRA 微调时适用",
    "For language models only: the zoo's LLMs, or a .safetensors file with its config.json, unedited":
        "仅用于语言模型：模型库中的 LLM，或带 config.json 的 .safetensors 文件（未经编辑）",
    "Generation rebuilds the prefill from the model's configuration, not from these layers":
        "生成按模型配置重建预填充过程，而不是使用这些层",
    "Generation uses the prompt length and new tokens": "生成使用提示长度和新生成词元数",
    "Only the zoo's sequence models are rebuilt at another length": "只有模型库中的序列模型能按其他长度重建",
    "Tokens of each prompt, processed at once (prefill)": "每个提示的词元数，一次性处理（预填充）",
    "Tokens generated per sequence, one at a time (decode); the KV cache holds prompt + new tokens":
        "每个序列逐个生成的词元数（解码）；KV 缓存保存提示 + 新生成的词元",
    "How the weights are stored: 16-bit, fp8/int8, 4-bit GPTQ/AWQ (int4), bitsandbytes nf4, or llama.cpp GGUF "
    "blocks (q4_k_m, q5_k_m, q8_0); scales and zero points counted":
        "权重的存储格式：16 位、fp8/int8、4 位 GPTQ/AWQ（int4）、bitsandbytes nf4，或 llama.cpp GGUF 块格式"
        "（q4_k_m、q5_k_m、q8_0）；缩放和零点都计入",
    "Storage of the cached keys and values (fp8/int8 halve a 16-bit cache)":
        "缓存的键和值的存储格式（fp8/int8 是 16 位缓存的一半）",
    "Train every weight, or rank-r LoRA adapters on a frozen base (QLoRA: the base in 4-bit nf4)":
        "训练全部权重，或在冻结的基座上训练秩为 r 的 LoRA 适配器（QLoRA：基座为 4 位 nf4）",
    "Rank r of each adapter: r x (in + out) parameters per adapted layer":
        "每个适配器的秩 r：每个被适配的层有 r x（输入 + 输出）个参数",
    "base dtype": "同基座",
    "eager": "eager 模式", "vLLM only: choose Runtime > vllm": "仅适用于 vLLM：请在“运行时”中选择 vllm",
    "vLLM's --enforce-eager: no CUDA graphs are captured, so they hold no memory (decode time is still "
    "estimated as graph replay)":
        "vLLM 的 --enforce-eager：不捕获 CUDA 图，因此它们不占显存（解码时间仍按图重放估算）",
    "What the adapters are kept and trained in on a bf16/fp16 base, as --adapter-dtype: fp32 as PEFT upcasts "
    "them, or the base's dtype as torchtune makes them; a fp32 or autocast base keeps fp32 adapters either way":
        "在 bf16/fp16 基座上适配器以何种数据类型保存和训练，同 --adapter-dtype：fp32 与 PEFT 的上转换一致，"
        "或与基座相同（torchtune 的做法）；fp32 或自动混合精度的基座上适配器总是 fp32",
    "Comma-separated projections to adapt (PEFT target_modules); empty: all of them":
        "要适配的投影层，用逗号分隔（PEFT target_modules）；留空：全部",
    # headline numbers and verdict (advisor/ui/summary.py, advisor/ui/verdict.py)
    "Keys and values of every token of every sequence: batch {batch} x ({prompt} prompt + {new} new tokens) x "
    "{per_token} per token ({layers} layers, {kv_heads} KV heads), stored as {dtype}":
        "每个序列每个词元的键和值：批大小 {batch} x（提示 {prompt} + 新生成 {new} 个词元）x 每词元 "
        "{per_token}（{layers} 层，{kv_heads} 个 KV 头），以 {dtype} 存储",
    "Prefill of the prompts + every decode step ({new} tokens per sequence)":
        "提示的预填充 + 每个解码步（每个序列 {new} 个词元）",
    "Needs <b>{need}</b> on a single card ({mode} in {runtime}, {precision}, batch {batch}, {prompt} + {new} tokens, "
    "KV cache {kv}, {method})":
        "单卡需要 <b>{need}</b>（用 {runtime} {mode}，{precision}，批大小 {batch}，{prompt} + {new} 个词元，"
        "KV 缓存 {kv}，{method}）",
    # recommendations (advisor/ui/recommend_model.py)
    "layer split": "按层拆分", "Decode tok/s": "解码 词元/秒", "Prefill tok/s": "预填充 词元/秒",
    "Generation only": "仅用于生成",
    "Generated tokens per second over all sequences and copies of the model: each decode step reads the weights "
    "and the KV cache once (the throughput)":
        "所有序列和模型副本合计每秒生成的词元：每个解码步读取一遍权重和 KV 缓存（即吞吐量）",
    "Prompt tokens per second while the prompts are processed at once (compute-bound)":
        "一次性处理提示时每秒处理的提示词元（受算力限制）",
    "Each card holds {weights} of the {all_weights} of weights and {kv} of the {all_kv} KV cache; with the "
    "prefill activations and workspaces, which are not split, it needs {need}, where one card would need "
    "{single}.":
        "每张卡保存 {all_weights} 权重中的 {weights}，以及 {all_kv} KV 缓存中的 {kv}；加上不拆分的预填充激活值和"
        "工作区，每张卡需要 {need}，而单张卡需要 {single}。",
    "{total} ({trainable} train)": "{total}（其中 {trainable} 参与训练）",
    "{n:,} in all; only the {trainable:,} of the LoRA adapters have gradients and optimizer state":
        "共 {n:,} 个；只有 LoRA 适配器的 {trainable:,} 个有梯度和优化器状态",
}
