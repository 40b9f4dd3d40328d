"""Chinese for sentences the estimators build with figures in them (the estimate's assumptions that the PDF
and the app print): templates as errors.py matches them, used by tr() when no exact entry exists; {reason}
is a phrase of its own, looked up again."""

MESSAGES: dict[str, str] = {
    "Generation: prefill of {prompt} prompt tokens, then {new} tokens decoded one at a time for each of {batch} "
    "sequences; FLOPs = prefill + every decode step.":
        "生成：先预填充 {prompt} 个提示词元，再为 {batch} 个序列逐个解码 {new} 个词元；FLOPs = 预填充 + 每个解码步。",
    "Weights stored as {format} with their real bytes (quantization scales and zero points included; embeddings, "
    "norms and lm_head stay 16-bit where the format keeps them so).":
        "权重以 {format} 存储，按实际字节计（含量化缩放因子和零点；格式保留 16 位的嵌入、归一化层和 lm_head "
        "仍按 16 位计）。",
    "Runtime transformers ({reason}): generate() grows the DynamicCache by torch.cat each step (the old and new "
    "keys of a layer live during the cat), keeps fp32 logits, scores and probabilities of the last position; the "
    "prefill holds the prompt's cache.":
        "运行时 transformers（{reason}）：generate() 每步用 torch.cat 扩展 DynamicCache"
        "（拼接期间同一层的新旧键同时存在），保留最后一个位置的 fp32 logits、分数和概率；预填充时持有提示的缓存。",
    "the default for {format} weights": "{format} 权重的默认运行时",
    "KV cache {dtype}; sliding-window layers hold at most their window.":
        "KV 缓存 {dtype}；滑动窗口层最多保存其窗口长度。",
    "KV cache {dtype}; sliding-window layers hold at most their window; multi-head latent attention caches the "
    "latent and the rotary key.":
        "KV 缓存 {dtype}；滑动窗口层最多保存其窗口长度；多头潜在注意力缓存潜在向量和旋转位置键。",
    "required_bytes = the peak + what the caching allocator, limited to a budget, cannot reuse while the prefill "
    "pass allocates and frees (replayed) + {margin} MiB (one large-pool segment, the replay's granule).":
        "required_bytes = 峰值 + 限定预算的缓存分配器在预填充分配和释放期间（重放）无法复用的部分 + {margin} MiB"
        "（一个大池段，即重放的粒度）。",
    "Precision {precision} by default: generation loads 16-bit weights, as transformers' torch_dtype, vLLM's dtype "
    "auto and llama.cpp do (fp16 on cards without bf16, the same bytes); --precision overrides it.":
        "默认精度 {precision}：生成时加载 16 位权重，与 transformers 的 torch_dtype、vLLM 的 dtype auto 和 llama.cpp "
        "相同（不支持 bf16 的卡用 fp16，字节数相同）；--precision 可改。",
    "Precision {precision} by default: generation from {weights} weights computes in bf16 (fp16 on cards without "
    "bf16, the same bytes); --precision overrides it.":
        "默认精度 {precision}：由 {weights} 权重生成时以 bf16 计算（不支持 bf16 的卡用 fp16，字节数相同）；"
        "--precision 可改。",
    "Mixture of experts: all {experts} experts per layer in memory, {per_token} per token in compute and in the "
    "bytes a decode step reads.":
        "混合专家：每层全部 {experts} 个专家都在显存中；计算量和每个解码步读取的字节按每词元 {per_token} 个专家计。",
    "{kind}: base weights frozen in {format}; rank-{rank} adapters (A: r x in, B: out x r, kept in {dtype}) on "
    "{targets} of the dense layers (not on routed experts) carry the only gradients and optimizer "
    "state; a frozen linear keeps nothing of its input for backward.":
        "{kind}：基础权重以 {format} 冻结；秩 {rank} 的适配器（A：r x in，B：out x r，以 {dtype} 保存）加在"
        "稠密层的 {targets} 上（不加在路由专家上），只有它们有梯度和优化器状态；冻结的全连接层不为反向保留输入。",
    "Weights stored as {format}: the blocks' linear layers in that format with its scales; embeddings, norms and "
    "the LM head in 16 bit.":
        "权重以 {format} 存储：各块的全连接层用该格式及其缩放因子；嵌入、归一化层和 LM 头为 16 位。",
}
