"""Make it fit: the changes that let a workload run on a card it does not fit (or fits too tightly).

keys     the one enumeration of changes (ChangeKey) with each change's label, note and properties
measure  re-estimates and times one variant of the workload on the card
changes  the single changes that apply to a workload, each as a function of the variant
llm      the language-model changes (LoRA, QLoRA, weight formats, KV cache, context)
search   single changes, the fewest changes together, sharding: the FitReport
present  the FitReport as text and JSON for the command line
"""
