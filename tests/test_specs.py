"""Algorithm texts: one reader (fastnet.algorithms.parse_spec) for from_spec and study grids.

Each case was accepted before and trained with other parameters than written, or expanded
a grid of 10^8 cells before any check.
"""
import time

import pytest

from fastnet.algorithms import MAX_SPEC_LENGTH, from_spec, parse_spec
from fastnet.study import MAX_GRID_CELLS, expand_grid

READERS = [from_spec, expand_grid]


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("spec, match", [
    ("backprop(**{'learning_rate': 5.0})", "no \\*\\* unpacking"),       # trained at 0.01
    ("backprop(0.5, momentum=[0, 0.9])", "positional"),                  # 0.5 dropped
    ("backprop(learning_rate=0.5, learning_rate=2.0)", "gives learning_rate twice"),
    ("rprop+(variant='irprop-')", "names the variant twice"),            # trained irprop-
    ("backprop(learning_rate=abs(-1))", "not a literal"),
    ("backprop(learning_rate=" + "-" * 100_000 + "1)", "at most 10000 characters"),
])
def test_specs_refuse_what_they_would_drop_or_override(read, spec, match):
    with pytest.raises(ValueError, match=match):
        read(spec)


def test_the_same_variant_twice_and_the_usual_forms_are_read():
    assert from_spec("rprop+(variant='rprop+')") == from_spec("rprop+")
    assert parse_spec("Quickprop( epsilon=0.01 , mu=1.75 )") == (
        "quickprop", {"epsilon": 0.01, "mu": 1.75})
    with pytest.raises(ValueError, match="must name one of"):
        parse_spec("xxx(a=1)")
    assert len(expand_grid("backprop(learning_rate=[0.1, 0.5], momentum=[0, 0.9])")) == 4
    assert MAX_SPEC_LENGTH == 10_000
    with pytest.raises(TypeError, match="`algorithm` must be a name"):
        parse_spec(3)


def test_a_huge_grid_is_refused_before_any_cell_is_made():
    axis = list(range(1, 101))
    spec = f"backprop(learning_rate={axis}, momentum={axis}, decay={axis}, weight_decay={axis})"
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"100000000 cells; at most {MAX_GRID_CELLS}"):
        expand_grid(spec)
    assert time.perf_counter() - start < 1.0
