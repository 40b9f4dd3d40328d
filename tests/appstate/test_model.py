"""The app's state model without Qt: what may be on screen after an edit, a failure, a cancel or a late result."""

from __future__ import annotations

import subprocess
import sys

import pytest

from advisor.appstate import AppModel, LayerDraft, RankingRequest, ShownEstimate, Signal
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.recommend.prepare import RankingInput, prepare_graph
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter


@pytest.fixture(scope="module")
def job() -> RankingInput:
    return prepare_graph(zoo.build("alexnet"), Workload(batch=4))


def _shown(job: RankingInput, pending: bool = False) -> ShownEstimate:
    return ShownEstimate(job, zoo.build("alexnet"), pending)


class Recorder:
    def __init__(self, *signals: Signal) -> None:
        self.count = 0
        for signal in signals:
            signal.connect(self)

    def __call__(self, *_args: object) -> None:
        self.count += 1


def test_importable_without_qt() -> None:
    blocked = "import sys; sys.modules['PySide6'] = None; import advisor.appstate; print('ok')"
    out = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_a_slot_connects_once() -> None:
    signal, seen = Signal(), Recorder()
    signal.connect(seen)
    with pytest.raises(ValueError, match="already connected"):
        signal.connect(seen)
    signal.emit()
    assert (signal.receivers, seen.count) == (1, 1)


def test_the_choice_reports_a_change_only_when_there_is_one() -> None:
    model = AppModel()
    changes = Recorder(model.workload_changed)
    assert model.set_choice(batch=32) is None  # the default already
    old = model.set_choice(batch=64, precision="amp_bf16")
    assert old is not None and old.batch == 32
    assert (model.choice.batch, model.choice.workload().precision, changes.count) == (64, "amp_bf16", 1)


def test_a_failure_marks_the_earlier_figures_stale_and_a_new_estimate_clears_it(job: RankingInput) -> None:
    model = AppModel()
    model.publish(_shown(job))
    shown = Recorder(model.result_changed)
    model.fail("expand1: unknown layer kind 'opaque_view'")
    assert model.result is not None and model.result.stale and not model.result.pending
    assert model.error == "expand1: unknown layer kind 'opaque_view'"
    model.fail("still broken")  # already stale: no second redraw
    assert shown.count == 1
    model.publish(_shown(job))
    assert not model.result.stale and model.error == ""


def test_a_ranking_is_shown_only_with_the_estimate_it_ranked(job: RankingInput) -> None:
    model = AppModel()
    model.publish(_shown(job))
    request = RankingRequest(CardFilter(), RankingOptions())
    model.ask_ranking(request, job)
    assert model.ranking_pending and model.shown_ranking() is None
    assert model.asked(request) and not model.asked(RankingRequest(CardFilter(vendor="AMD"), RankingOptions()))
    other = RankingRequest(CardFilter(vendor="AMD"), RankingOptions())
    assert not model.ranked(other, job, [])  # an older request's answer, arriving late
    assert model.ranked(request, job, [])
    assert not model.ranking_pending and model.shown_ranking() is model.ranking
    newer = prepare_graph(zoo.build("alexnet"), Workload(batch=8))
    model.publish(_shown(newer))
    assert model.shown_ranking() is None  # ranked batch 4; batch 8 is on screen
    assert not model.ranked(request, job, [])


def test_cancel_leaves_nothing_pending(job: RankingInput) -> None:
    model = AppModel()
    model.publish(_shown(job, pending=True))
    model.ask_ranking(RankingRequest(CardFilter(), RankingOptions()), job)
    model.cancel_simulation()
    model.cancel_ranking()
    assert model.result is not None and not model.result.pending and model.simulation_cancelled
    assert not model.ranking_pending
    ranking = model.shown_ranking()
    assert ranking is not None and ranking.cancelled and ranking.entries == ()
    model.publish(_shown(job))  # a new estimate: the cancel note goes
    assert not model.simulation_cancelled


def test_file_new_clears_the_estimate_and_the_ranking(job: RankingInput) -> None:
    model = AppModel()
    model.publish(_shown(job))
    request = RankingRequest(CardFilter(), RankingOptions())
    model.ask_ranking(request, job)
    model.ranked(request, job, [])
    model.clear()
    assert (model.result, model.ranking, model.ranking_request) == (None, None, None)


def test_an_imported_file_is_simulated_until_edited() -> None:
    model = AppModel()
    rows = [LayerDraft("x", "input", {"shape": [4]}), LayerDraft("fc", "linear", {"out_features": 2})]
    model.mark_imported("net.py", rows)
    assert model.simulated_spec("net.py", rows) == "net.py" and not model.edited_import("net.py", rows)
    edited = [rows[0], LayerDraft("fc", "linear", {"out_features": 3})]
    assert model.simulated_spec("net.py", edited) is None and model.edited_import("net.py", edited)
    model.set_choice(inplace=True)  # a rewrite of the graph: the file as written is no longer what is asked
    assert model.simulated_spec("net.py", rows) is None
    model.mark_imported(None, rows)  # not a file that can be simulated (a .json network)
    assert not model.edited_import("net.py", edited)


def test_with_lora_only_the_adapters_count_as_trained() -> None:
    graph = zoo.build("llama-3.2-1b", 64)
    workload = Workload("train", 1, "amp_bf16", finetune="qlora", lora_rank=8)
    shown = ShownEstimate(prepare_graph(graph, workload), graph)
    # Llama 3.2 1B: hidden 2048, 8 KV heads of 64 (k, v: 512 wide), MLP 8192, 16 layers; rank r adds
    # r x (in + out) per projection: q, o 4096; k, v 2560; gate, up, down 10240 -> 44,032 r per layer
    assert shown.trainable_param_count() == 16 * 8 * 44_032  # 5,636,096
    assert ShownEstimate(prepare_graph(graph, Workload("train", 1)), graph).trainable_param_count() is None
