"""advisor: does my network fit a GPU, how fast will it run, and which card gives the most for the money."""

__version__ = "0.1.0"
# The name on the package index: `advisor` there is an unrelated project (a hyper-parameter tuning system,
# since 2018), so pip installs this one as gpu-advisor; the import package and the command stay `advisor`.
DISTRIBUTION = "gpu-advisor"
