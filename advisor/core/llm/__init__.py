"""Decoder language models described by their hyper-parameters (one description for every family), and what
follows from it: the layer graph, exact parameter counts, quantized bytes, the KV cache, LoRA adapters."""
