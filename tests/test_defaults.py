"""Defaults agree across layers: ``smallvis()`` -> ``SmallVis`` -> the CLI.

A parameter passes from the functional API through the estimator unchanged, so the estimator must
offer every parameter of ``smallvis()`` (but ``X`` and ``ret_extra``) under the same name and with an
identical default (openTSNE's ``TestDefaultParameterSettings``) — but one: ``defaults``, which selects
the set of defaults, is the R package's for ``smallvis()`` and the modern set for the estimator.
"""

import inspect

import pytest

from smallvis import SmallVis, smallvis

# the data and its labels go to fit(X, y); fit always keeps the full result
NOT_ON_ESTIMATOR = {"X", "y", "ret_extra"}

API = {name: p for name, p in inspect.signature(smallvis).parameters.items()
       if name not in NOT_ON_ESTIMATOR}
ESTIMATOR = dict(inspect.signature(SmallVis).parameters)


def test_estimator_has_exactly_the_api_parameters():
    assert sorted(set(API) - set(ESTIMATOR)) == [], "missing on SmallVis"
    assert sorted(set(ESTIMATOR) - set(API)) == [], "on SmallVis but not smallvis()"


# the one deliberate difference: which set of defaults fills the unset arguments
DIFFERENT = {"defaults": ("smallvis", "auto")}


@pytest.mark.parametrize("name", sorted(set(API) - set(DIFFERENT)))
def test_estimator_default_is_identical(name):
    expected, got = API[name].default, ESTIMATOR[name].default
    assert type(got) is type(expected), f"{name}: {got!r} vs {expected!r}"  # 500 is not 500.0
    assert got == expected, f"{name}: {got!r} vs {expected!r}"


def test_estimator_parameter_kinds():
    """``method`` may be positional, as in ``SmallVis("umap")``; everything else is keyword-only."""
    kinds = {name: p.kind for name, p in ESTIMATOR.items()}
    assert list(ESTIMATOR)[0] == "method"
    assert kinds.pop("method") is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert set(kinds.values()) == {inspect.Parameter.KEYWORD_ONLY}


def test_a_library_neither_plots_nor_prints_unasked():
    """The only defaults that differ from the original (docs/original.md#arguments-and-defaults)."""
    for layer in (API, ESTIMATOR):
        assert layer["epoch_callback"].default is None
        assert layer["verbose"].default is False


def test_estimator_docstring_names_every_parameter():
    doc = SmallVis.__doc__
    params = doc[doc.index("Parameters\n"):doc.index("Attributes\n")]
    missing = [name for name in ESTIMATOR if name not in params.replace(",", " ").split()]
    assert missing == []


def test_the_sets_of_defaults_differ_only_in_their_name():
    for name, (api, estimator) in DIFFERENT.items():
        assert API[name].default == api
        assert ESTIMATOR[name].default == estimator


def test_default_estimator_stores_the_defaults():
    params = SmallVis().get_params()
    assert params == {name: DIFFERENT.get(name, (None, p.default))[1] for name, p in API.items()}
