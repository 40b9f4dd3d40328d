"""QtLiveGpusPanel with pytest-qt, driven by the FakeReader over a real H200's recordings."""

from __future__ import annotations

import math
from pathlib import Path

import pynvml
import pytest
from pytestqt.qtbot import QtBot

from advisor.telemetry.fake import FakeReader
from advisor.telemetry.poller import Poller
from advisor.telemetry.present import GIB
from advisor.ui.live_gpus import FITS_COLOUR, NO_FIT_COLOUR, QtDeviceCard, QtLiveGpusPanel

FIXTURES = Path(__file__).resolve().parents[1] / "telemetry" / "fixtures"
SCREENSHOT = Path("/tmp/telemetry_panel.png")


def make_reader(device_count: int = 1) -> FakeReader:
    return FakeReader(FIXTURES / "nvml_device.json", FIXTURES / "nvml_timeseries.csv", device_count)


def make_panel(qtbot: QtBot, poller: Poller | None, refresh_ms: int = 1000) -> QtLiveGpusPanel:
    panel = QtLiveGpusPanel(poller, refresh_ms=refresh_ms)
    qtbot.addWidget(panel)
    panel.resize(760, 900)
    return panel


def polled(reader: FakeReader, polls: int) -> Poller:
    poller = Poller(reader)
    for _ in range(polls):
        poller.poll_once()
    return poller


def only_card(panel: QtLiveGpusPanel) -> QtDeviceCard:
    (card,) = panel.cards.values()
    return card


def test_shows_the_h200_and_its_figures(qtbot: QtBot) -> None:
    panel = make_panel(qtbot, polled(make_reader(), 1))
    panel.refresh()
    card = only_card(panel)
    assert card.title.text() == "[0] NVIDIA H200"
    assert panel.status.text() == "1 NVIDIA GPU · NVIDIA driver 580.159.04"
    assert card.values["Memory used"].text() == "0.6 / 140.4 GiB"
    assert card.values["Power"].text() == "79 W / 700 W"
    assert card.values["Temperature"].text() == "33 °C"
    assert card.values["PCIe link"].text() == "Gen 5 x16"
    assert card.values["Fan"].text() == "n/a"  # NVMLError_NotSupported on the real card
    assert card.error.isHidden()
    assert card.processes.text() == "Processes: none"
    assert not panel.scroll_area.isHidden()


def test_history_chart_gets_points_from_the_background_poller(qtbot: QtBot) -> None:
    reader = make_reader()
    poller = Poller(reader, interval_s=0.01)
    panel = make_panel(qtbot, poller, refresh_ms=20)  # the panel's own QTimer pulls the state
    panel.show()  # while it is on screen: a hidden panel waits for its showEvent
    poller.start()
    try:
        qtbot.waitUntil(
            lambda: bool(panel.cards) and len(only_card(panel).charts.lines["power"].get_xdata()) >= 10,
            timeout=20000,  # ten redraws of matplotlib charts: seconds on a loaded 2-core CI machine
        )
    finally:
        poller.stop()
    charts = only_card(panel).charts
    xs = list(charts.lines["power"].get_xdata())
    ys = list(charts.lines["memory_used"].get_ydata())
    assert xs == sorted(xs) and xs[-1] == 0.0 and xs[0] < 0  # minutes before the latest reading
    assert ys[0] == pytest.approx(618 / 1024)  # GiB: the recording's first sample
    assert charts.axes[0].get_xlim() == (-10.0, 0.0)  # the 10-minute window
    assert charts.total.get_ydata()[0] == pytest.approx(150_754_820_096 / GIB)


def test_redraws_only_when_a_poll_came_in(qtbot: QtBot) -> None:
    poller = polled(make_reader(), 2)
    panel = make_panel(qtbot, poller)
    panel.refresh()
    card = only_card(panel)
    card.values["Power"].setText("stale")
    panel.refresh()
    assert card.values["Power"].text() == "stale"  # nothing new: no redraw
    poller.poll_once()
    panel.refresh()
    assert card.values["Power"].text() != "stale"


def not_supported(*args: object) -> None:
    raise pynvml.NVMLError_NotSupported()


def test_unsupported_figures_read_na(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = make_reader()
    for call in (
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetTemperature",
        "nvmlDeviceGetCurrPcieLinkGeneration",
        "nvmlDeviceGetCurrPcieLinkWidth",
    ):
        monkeypatch.setattr(reader.fake, call, not_supported)
    panel = make_panel(qtbot, polled(reader, 3))
    panel.refresh()
    card = only_card(panel)
    assert card.values["Power"].text() == "n/a / 700 W"
    assert card.values["Temperature"].text() == "n/a"
    assert card.values["PCIe link"].text() == "n/a"
    assert card.error.isHidden()  # not supported is not an error
    assert all(math.isnan(y) for y in card.charts.lines["power"].get_ydata())


def test_no_gpu_state(qtbot: QtBot) -> None:
    reader = make_reader()
    reader.fake.init_error = "NVMLError_LibraryNotFound"
    panel = make_panel(qtbot, polled(reader, 1))
    panel.refresh()
    first, _, advice = panel.status.text().partition("\n\n")
    assert first == "No NVIDIA GPU found (NVML Shared Library Not Found)"
    assert "nvidia-smi" in advice and "driver" in advice  # what to install to see readings
    assert panel.cards == {}
    assert panel.scroll_area.isHidden()
    panel.set_workload_requirement(GIB, "mlp")  # nothing to compare with, and no crash


def test_before_the_first_poll(qtbot: QtBot) -> None:
    panel = make_panel(qtbot, Poller(make_reader()))
    panel.refresh()
    assert panel.status.text() == "Reading the GPUs…"
    assert make_panel(qtbot, None).status.text() == "Reading the GPUs…"


def test_fits_and_does_not_fit(qtbot: QtBot) -> None:
    panel = make_panel(qtbot, polled(make_reader(), 3))
    panel.refresh()
    card = only_card(panel)
    assert card.fit.isHidden()
    panel.set_workload_requirement(int(17.1 * GIB), "resnet50 train")
    assert card.fit.text() == "resnet50 train fits on your NVIDIA H200: 17.1 of 139.8 GiB"
    assert FITS_COLOUR in card.fit.styleSheet()
    assert card.charts.requirement.get_visible() and card.charts.requirement.get_ydata()[0] == pytest.approx(17.1)
    panel.set_workload_requirement(200 * GIB, "llama-70b train")
    assert card.fit.text() == "llama-70b train does not fit on your NVIDIA H200: 200.0 of 139.8 GiB"
    assert NO_FIT_COLOUR in card.fit.styleSheet()
    assert card.charts.axes[0].get_ylim()[1] >= 200  # the line is drawn inside the chart
    panel.set_workload_requirement(None, "")
    assert card.fit.isHidden() and not card.charts.requirement.get_visible()
    legend = card.charts.axes[0].get_legend()
    assert [text.get_text() for text in legend.get_texts()] == ["in use", "total"]


def test_a_gpu_disappearing(qtbot: QtBot) -> None:
    reader = make_reader(device_count=2)
    poller = polled(reader, 5)
    panel = make_panel(qtbot, poller)
    panel.set_workload_requirement(int(17.1 * GIB), "")  # set before the cards exist: applied when they come
    panel.refresh()
    assert len(panel.cards) == 2
    reader.disappear(1, "lost")
    poller.poll_once()
    panel.refresh()
    lost = list(panel.cards.values())[1]
    assert lost.error.text() == "GPU is lost (NVMLError_GpuIsLost)" and not lost.error.isHidden()
    assert lost.values["Memory used"].text() == "n/a / n/a"
    assert lost.processes.text() == "Processes: n/a"
    assert lost.fit.text().endswith("(its last reading)")
    assert math.isnan(lost.charts.lines["power"].get_ydata()[-1])  # a gap in the chart
    reader.disappear(1, "removed")  # then the driver drops it from the list
    poller.poll_once()
    panel.refresh()
    present, gone = panel.cards.values()  # the removed card stays, with its history, until that ages out
    assert present.title.text() == "[0] NVIDIA H200" and present.error.isHidden()
    assert gone.title.text() == "[1] NVIDIA H200  (disappeared)"
    assert gone.error.text() == "GPU is lost (NVMLError_GpuIsLost)"  # the last thing it said


def test_a_removed_card_leaves_when_its_history_ages_out(qtbot: QtBot) -> None:
    reader = make_reader(device_count=2)
    poller = Poller(reader, history_s=1.0)
    poller.poll_once()
    panel = make_panel(qtbot, poller)
    panel.refresh()
    reader.disappear(1, "removed")
    for _ in range(10):  # 2 s of the recording
        poller.poll_once()
    panel.refresh()
    assert [card.title.text() for card in panel.cards.values()] == ["[0] NVIDIA H200"]
    assert panel.status.text() == "1 NVIDIA GPU · NVIDIA driver 580.159.04"


def test_screenshot(qtbot: QtBot) -> None:
    """Saves the panel for a person to look at (a run of the recording with a workload drawn against it)."""
    panel = make_panel(qtbot, polled(make_reader(), 300))
    panel.refresh()
    panel.set_workload_requirement(int(17.1 * GIB), "resnet50 train b256")
    panel.show()
    qtbot.waitExposed(panel)
    only_card(panel).charts.canvas.draw()
    assert panel.grab().save(str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000


def test_a_hidden_panel_catches_up_when_shown(qtbot: QtBot) -> None:
    poller = polled(make_reader(), 1)
    panel = make_panel(qtbot, poller, refresh_ms=20)
    qtbot.wait(100)  # five ticks of its timer, all while hidden: nothing drawn
    assert not panel.isVisible() and not panel.cards
    panel.show()
    assert only_card(panel).values["Power"].text() != ""  # drawn at once on show, not at the next tick
    polls = len(only_card(panel).charts.lines["power"].get_xdata())
    poller.poll_once()
    qtbot.waitUntil(lambda: len(only_card(panel).charts.lines["power"].get_xdata()) == polls + 1, timeout=2000)
