"""Model files -> the core IR. The only package that imports torch, onnx or safetensors (DESIGN.md, Layers).

Forms without torch: `.onnx` (onnx_import), `.safetensors` + config.json (safetensors_import). The torch
forms (torch_loader.load_module, torch_graph.module_to_graph) import torch lazily and say which extra to
install when it is missing. Every user mistake is a SpecError naming the file and what is wrong.
"""
