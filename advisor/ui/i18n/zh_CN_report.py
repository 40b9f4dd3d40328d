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
    "Ranked by {objective}; {n} configurations (one card of each kind) were considered; one row per card.":
        "按“{objective}”排名；共考虑 {n} 种配置（每种显卡一张）；每张卡一行。",
}
