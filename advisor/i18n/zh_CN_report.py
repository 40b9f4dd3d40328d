"""Chinese for the report's words of issue 27's last items: the assumptions' field names in words, the
calibration's source, a price's condition; the generation table's value header, a row's verdict."""

MESSAGES: dict[str, str] = {
    "the peak allocated memory": "峰值分配显存", "the required memory": "所需显存",
    "the reserved memory": "缓存保留显存", "the nvidia-smi total": "nvidia-smi 显示的总量",
    "measured on an NVIDIA H200, driver 580.159, CUDA 13.0, PyTorch 2.11 (shared/calibration/h200)":
        "测自 NVIDIA H200，驱动 580.159，CUDA 13.0，PyTorch 2.11（shared/calibration/h200）",
    "{amount} USD ({condition})": "{amount} 美元（{condition}）",
    "tok/s per $1k": "每千美元 词元/秒",
    "{what}: {verdict}": "{what}：{verdict}",
    "Per $1/h": "每 1 美元/小时租金",
    "{value}; price over a year old": "{value}；价格已超过一年",
    "Throughput per USD of hourly rent: value for money when renting": "每 1 美元小时租金的吞吐量：租用时的性价比",
    "Ranked by {objective}; {n} configurations (one card of each kind) were considered; one row per card.":
        "按“{objective}”排名；共考虑 {n} 种配置（每种显卡一张）；每张卡一行。",
}
# the estimate's fixed assumptions that had no Chinese
MESSAGES.update({
    "Prefill activations come from replaying the forward pass without autograd; the LM head sees only the last "
    "position (generate() asks for logits_to_keep=1); bitsandbytes nf4 dequantizes each weight to 16 bit for its "
    "matmul.":
        "预填充激活值来自不带 autograd 的前向重放；LM 头只看最后一个位置（generate() 请求 logits_to_keep=1）；"
        "bitsandbytes nf4 在每次矩阵乘前把权重反量化为 16 位。",
    "decode_flops_per_token is taken at the mean context length (prompt + half the new tokens).":
        "decode_flops_per_token 按平均上下文长度（提示 + 一半新词元）计算。",
    "Gradient checkpointing on by default for QLoRA, as PEFT's prepare_model_for_kbit_training does; "
    "--no-checkpointing turns it off.":
        "QLoRA 默认开启梯度检查点，与 PEFT 的 prepare_model_for_kbit_training 一致；--no-checkpointing 可关闭。",
    "the decode FLOPs per token": "每词元解码 FLOPs",
})
# the ranking's speed headers in generation (decode over its unit, prefill over its unit)
MESSAGES.update({"Decode": "解码", "Prefill": "预填充"})
