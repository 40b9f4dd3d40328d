"""Built-in architectures, built layer by layer from their definitions (not from pasted totals)."""
