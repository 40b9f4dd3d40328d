"""Buying advice: which cards (and how many) run a workload, how fast, and what each costs per unit of work."""
