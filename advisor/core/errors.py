"""User-facing errors: each names where the problem is (layer, field, file) in one line."""


class AdvisorError(Exception):
    """A mistake in the user's input. The command line prints it as one line and exits with code 2."""


class SpecError(AdvisorError):
    """A model or workload specification that cannot be built (unknown name, bad option)."""


class ShapeError(AdvisorError):
    """A layer whose parameters do not fit its input, e.g. "conv3: kernel 7 larger than padded input 5x5"."""

    def __init__(self, layer: str, message: str) -> None:
        super().__init__(f"{layer}: {message}")
        self.layer = layer
