"""The app's state without Qt (DESIGN.md, Layers): the widgets in advisor/ui mirror it."""

from advisor.appstate.draft import DraftCheck, LayerDraft, check, default_params, drafts_from_graph
from advisor.appstate.model import AppModel, RankingRequest, RankingResult, ShownEstimate, WorkloadChoice
from advisor.appstate.signals import Signal

__all__ = [
    "AppModel",
    "DraftCheck",
    "LayerDraft",
    "RankingRequest",
    "RankingResult",
    "ShownEstimate",
    "Signal",
    "WorkloadChoice",
    "check",
    "default_params",
    "drafts_from_graph",
]
