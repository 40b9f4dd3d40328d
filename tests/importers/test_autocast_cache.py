"""The simulator's autocast weight-cast cache follows autocast_mode.cpp's cached_cast conditions: leaf fp32
weights that require grad, never a view, never under inference_mode (PyTorch PR 165068)."""

from __future__ import annotations

import torch

from advisor.importers.simulate.autocast import AutocastPolicy


def _weight() -> torch.nn.Parameter:
    with torch.device("meta"):
        return torch.nn.Parameter(torch.empty(4, 8, 16))


def test_a_weight_is_cast_once_per_region_in_grad_mode() -> None:
    policy, weight = AutocastPolicy(torch.bfloat16), _weight()
    first = policy.cast(weight, torch.bfloat16)
    assert policy.cast(weight, torch.bfloat16) is first
    policy.clear()
    assert policy.cast(weight, torch.bfloat16) is not first


def test_inference_mode_caches_nothing() -> None:
    policy, weight = AutocastPolicy(torch.bfloat16), _weight()
    with torch.inference_mode():
        first = policy.cast(weight, torch.bfloat16)
        assert policy.cast(weight, torch.bfloat16) is not first
    assert policy.cache == {}


def test_a_view_of_a_weight_is_cast_anew_each_time() -> None:
    # a slice of stacked expert weights (weight[0]) is a leaf under no_grad, yet autocast skips views
    policy, weight = AutocastPolicy(torch.bfloat16), _weight()
    with torch.no_grad():
        view = weight[0]
        assert view.is_leaf and view.requires_grad and view._is_view()
        assert policy.cast(view, torch.bfloat16) is not policy.cast(view, torch.bfloat16)
    assert policy.cache == {}


def test_the_cache_keeps_its_source_alive_so_an_id_is_never_reused() -> None:
    policy, weight = AutocastPolicy(torch.bfloat16), _weight()
    policy.cast(weight, torch.bfloat16)
    source, cast = policy.cache[id(weight)]
    assert source is weight and cast.shape == weight.shape and cast.dtype == torch.bfloat16
