"""Randomness is an explicit argument: one conversion at the top of a run, generators passed down."""

from __future__ import annotations

import numpy as np


def as_generator(random_state) -> np.random.Generator:
    """Turn ``None``, an int seed, a ``SeedSequence`` or a ``Generator`` into a ``Generator``."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        f"random_state must be None, an int or a numpy Generator; got {type(random_state).__name__}"
    )


def spawn(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators (for repeats and parallel work)."""
    return [np.random.default_rng(s) for s in rng.bit_generator.seed_seq.spawn(n)]


def child(rng: np.random.Generator) -> np.random.Generator:
    """An independent generator derived from ``rng`` *without drawing from it*.

    For randomness that only some engines need (an approximate kNN search's seed): taken from a
    child stream, it leaves ``rng`` where it was, so the draws that follow (the initial coordinates)
    are the same whichever engine runs. ``rng`` remembers how many children it has given, so two
    calls give different children. A generator without a seed sequence gives a draw instead.
    """
    try:
        return rng.spawn(1)[0]
    except (AttributeError, TypeError):
        return np.random.default_rng(int(rng.integers(2**63)))
