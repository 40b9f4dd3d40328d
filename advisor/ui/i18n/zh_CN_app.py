"""Simplified Chinese for the strings added by the "app answers first" work (issue 15): the method line,
the verdict, validation and the new controls. Kept apart from zh_CN.py so parallel edits merge cleanly."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Simulating {file}": "正在模拟 {file}",
    "Method: simulated (one real PyTorch step of the file, on the meta device, as the command line does)":
        "方法：模拟（在 meta 设备上运行该文件真实的一步 PyTorch 计算，与命令行相同）",
    "Method: analytic for now; simulating the PyTorch file (the command line's method)…":
        "方法：暂为解析估算；正在模拟该 PyTorch 文件（命令行所用的方法）…",
    "Method: analytic, because the imported graph was edited (the simulation runs the file as written)":
        "方法：解析估算，因为导入的网络已被修改（模拟只能运行文件原样的模型）",
    "Method: analytic (layer formulas over the graph)": "方法：解析估算（按层公式计算网络图）",
    "a name": "名称",
    "memory above 0 GiB": "大于 0 GiB 的显存",
    "bandwidth above 0 GB/s": "大于 0 GB/s 的带宽",
    "an FP32 rate above 0": "大于 0 的 FP32 算力",
    "a TDP above 0 W": "大于 0 W 的 TDP",
    "The card needs {what}.": "这张卡还需要填写：{what}。",
    "Remove card": "删除显卡",
    "Delete the selected card; only cards you added or edited": "删除所选显卡；仅限你添加或修改过的显卡",
    "Removing the card": "正在删除显卡",
    "Card not removed": "显卡未删除",
    "incomplete": "数据不全",
}
