"""Simplified Chinese for opening a model by name (advisor/ui/open_model.py). Its own file so parallel edits
of the other catalogues merge cleanly."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Open by name…": "按名称打开…",
    "Open a model by name": "按名称打开模型",
    "Hub id (Qwen/Qwen3-8B) or library name (llama 8b)": "Hub 模型 ID（Qwen/Qwen3-8B）或模型库名称（llama 8b）",
    "Open": "打开",
    "Cancel import": "取消导入",
    "Type a Hub id (ORG/NAME) or pick a library model.": "请输入 Hub 模型 ID（组织/名称），或从模型库中选择。",
    "Import cancelled.": "导入已取消。",
}
