"""Simplified Chinese for the workload's "More options" rows (advisor/ui/workload_options.py) and the optimizers
the workload panel offers. Its own file so parallel edits of the other catalogues merge cleanly."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "More options": "更多选项",
    "More options ({count} set)": "更多选项（已设 {count} 项）",
    "Attention, TF32, the allocator; the training loop's options; llama.cpp's and vLLM's settings":
        "注意力实现、TF32、分配器；训练循环的选项；llama.cpp 和 vLLM 的设置",
    "Attention": "注意力实现",
    "the model's": "按模型默认",
    "transformers' attn_implementation, as --attention: eager keeps the scores and probabilities (batch x heads x "
    "tokens²), sdpa and flash fused kernels only the output":
        "transformers 的 attn_implementation，同 --attention：eager 保存注意力分数和概率（批大小 × 头数 × 词元数²），"
        "sdpa 和 flash 的融合内核只保存输出",
    "TF32 matmuls": "TF32 矩阵乘法",
    "fp32 matmuls on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32), as --tf32: speed only":
        "fp32 矩阵乘法在 TF32 张量核心上运行（torch.backends.cuda.matmul.allow_tf32），同 --tf32：只影响速度",
    "Expandable segments": "可扩展内存段",
    "PyTorch's allocator with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, as --expandable-segments: less "
    "memory reserved beyond what is allocated":
        "PyTorch 分配器使用 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True，同 --expandable-segments："
        "已分配之外预留的显存更少",
    "Loss": "损失函数",
    "standard": "标准",
    "fused, chunked": "融合分块",
    "As --loss: fused computes the LM head and cross-entropy chunk by chunk (Liger, Cut Cross-Entropy), so the "
    "full logits are never held":
        "同 --loss：融合方式分块计算语言模型头和交叉熵（Liger、Cut Cross-Entropy），从不保存完整的 logits",
    "CPU offload": "CPU 卸载",
    "optimizer + weights": "优化器状态 + 权重",
    "As --offload: the optimizer state (+ weights: also the parameters) kept in system RAM, as DeepSpeed "
    "ZeRO-Offload and FSDP CPU offload do":
        "同 --offload：优化器状态（选“+ 权重”时参数也一样）放在系统内存中，与 DeepSpeed ZeRO-Offload 和 FSDP CPU "
        "卸载相同",
    "The loop drops the logits": "训练循环丢弃 logits",
    "As --drop-logits: the model's output is let go before backward, as transformers' Trainer and torchtune do "
    "(a plain loop keeps it until the step ends)":
        "同 --drop-logits：反向传播前释放模型输出，与 transformers 的 Trainer 和 torchtune 相同（普通循环会保留到"
        "这一步结束）",
    "transformers release": "transformers 版本",
    "As --transformers-version: 5 upcasts a copy of the logits in the loss; up to 4.45 the output keeps fp32 "
    "logits and the loss reads a shifted fp32 copy":
        "同 --transformers-version：5 在损失函数中把 logits 的副本转为 fp32；4.45 及以前，输出保留 fp32 logits，"
        "损失函数再读取一份移位的 fp32 副本",
    "GPU layers": "GPU 层数",
    "all": "全部",
    "llama.cpp's -ngl: repeating layers on the GPU, the rest in system RAM (all: every layer)":
        "llama.cpp 的 -ngl：放在 GPU 上的重复层数，其余在系统内存中（全部：每一层）",
    "Memory share": "显存占比",
    "vLLM's --gpu-memory-utilization: the share of the card's memory the engine claims":
        "vLLM 的 --gpu-memory-utilization：引擎占用的显存比例",
    "Max sequences": "最大序列数",
    "vLLM's --max-num-seqs: sequences per step; its startup samples that many":
        "vLLM 的 --max-num-seqs：每步的序列数；启动时按这么多序列采样",
    "Batched tokens": "批处理词元数",
    "vLLM's --max-num-batched-tokens: the tokens of its startup profile's forward":
        "vLLM 的 max_num_batched_tokens 参数：启动剖析时前向传播的词元数",
    "vLLM release": "vLLM 版本",
    "up to 0.16": "0.16 及以前",
    "As --vllm-version: 0.17 to 0.19 capture the CUDA graphs after the share; up to 0.16 the profile sorts a "
    "vocabulary row per sequence":
        "同 --vllm-version：0.17 至 0.19 在划定显存份额之后捕获 CUDA 图；0.16 及以前，剖析时为每个序列排序一整行"
        "词表",
    # the verdict (advisor/ui/verdict.py)
    "vllm at {share} of the card": "vllm（占显存 {share}）",
    "llama.cpp with {layers} layers on the GPU": "llama.cpp（{layers} 层在 GPU 上）",
    "optimizer state in system RAM": "优化器状态在系统内存中",
    "weights and optimizer state in system RAM": "权重和优化器状态在系统内存中",
    # the optimizers (advisor/ui/workload_panel.py)
    "AdamW 8-bit": "8 位 AdamW",
    "paged AdamW 8-bit": "分页 8 位 AdamW",
    "Adam keeps two states per parameter, momentum one; 8-bit AdamW two of one byte (paged: in unified memory, "
    "off the card's peak), Adafactor a factored second moment, Lion one fp32 state":
        "Adam 每个参数保存两份状态，动量法一份；8 位 AdamW 两份各一字节（分页版在统一内存中，不计入显卡峰值），"
        "Adafactor 保存分解的二阶矩，Lion 一份 fp32 状态",
}
