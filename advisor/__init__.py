"""advisor: does my network fit a GPU, how fast will it run, and which card gives the most for the money."""

__version__ = "0.1.0"
