"""Names on charts that never print over each other (issue 27: the model map, the memory-vs-batch lines, the
job chart's frontier).

Where a label lands is only known once the figure is laid out (constrained layout moves the axes) and its
text measured in its font (a CJK name is twice as wide as its letters suggest), so the charts place their
labels after a layout pass, measuring each one's extent, rather than guessing widths beforehand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from matplotlib.figure import Figure
from matplotlib.text import Annotation
from matplotlib.transforms import BboxBase

Align = Literal["left", "center", "right"]
Offset = tuple[float, float, Align]  # points right and up from the point, and the horizontal alignment
PAD_PX = 1.5


def _clear(box: BboxBase, kept: Sequence[BboxBase], inside: BboxBase) -> bool:
    return (
        inside.x0 <= box.x0
        and box.x1 <= inside.x1
        and inside.y0 <= box.y0
        and box.y1 <= inside.y1
        and not any(box.overlaps(other) for other in kept)
    )


def _place(
    figure: Figure,
    labels: Sequence[Annotation],
    offsets: Sequence[Sequence[Offset]],
    obstacles: Callable[[], Sequence[BboxBase]],
) -> list[Annotation]:
    figure.draw_without_rendering()  # the final layout: positions and text extents are now true
    kept: list[BboxBase] = list(obstacles())
    shown = []
    for index, label in enumerate(labels):
        label.set_visible(True)
        inside = label.axes.get_window_extent() if label.axes is not None else figure.bbox
        tries = offsets[index] if index < len(offsets) and offsets[index] else [None]
        for offset in tries:
            if offset is not None:
                label.xyann = offset[:2]
                label.set_horizontalalignment(offset[2])
            box = label.get_window_extent().padded(PAD_PX)
            if _clear(box, kept, inside):
                kept.append(box)
                shown.append(label)
                break
        else:
            label.set_visible(False)
    return shown


def place_labels(
    figure: Figure,
    labels: Sequence[Annotation],
    offsets: Sequence[Sequence[Offset]] = (),
    obstacles: Callable[[], Sequence[BboxBase]] = tuple,
) -> list[Annotation]:
    """Each label (most wanted first) goes to the first of its `offsets` where it stays inside its axes and
    covers neither a label placed before it nor an obstacle (display pixels, asked for after the layout); one
    with no such place is hidden. Without offsets a label is kept where it is, or hidden. Done again whenever
    the canvas is resized (the app's charts take their widget's size): returns the labels shown now."""
    figure.canvas.mpl_connect("resize_event", lambda _event: _place(figure, labels, offsets, obstacles))
    return _place(figure, labels, offsets, obstacles)
