"""Sweep grids: read a YAML/JSON file (or take a dict), validate it strictly, expand it into runs.

Schema (every key optional)::

    method: [tsne, umap]          # one name or a list ("methods" is accepted too); default tsne
    params:                        # smallvis() keyword arguments: a list is swept, anything else fixed
      perplexity: [5, 30]
      max_iter: 300
    method_params:                 # per method: its ("name", {...}) parameters, lists swept
      umap: {spread: [1, 2]}
    seeds: [1, 2]                  # or an int n: seeds 0..n-1; default [0]

To fix a list-valued argument, wrap it in a list: ``perplexity: [[multiscale, [5, 30]]]``; from
Python a tuple is a fixed value too. Each run (method x swept values x seed) has a stable id: a
readable prefix plus a hash of its settings (method, method parameters, every parameter, seed), so a
run keeps its hash when the grid around it grows.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

TOP_KEYS = ("method", "params", "method_params", "seeds")
FORBIDDEN = {
    "X": "the data is the sweep's input",
    "random_state": "seeds come from the top-level 'seeds' key",
    "method": "use the top-level 'method' key (and 'method_params' for its parameters)",
    "ret_extra": "a sweep always records the full result",
    "epoch_callback": "not available in sweeps",
    "verbose": "use the sweep's own verbose option",
    "progress": "not available in sweeps",
}
RESERVED_COLUMNS = ("id", "method", "seed", "final_cost", "iter", "time_secs", "wall_secs", "status",
                    "error")


@dataclass(frozen=True)
class Run:
    """One point of a grid: what ``smallvis()`` is called with, and its id."""

    id: str
    hash: str
    method: str
    method_params: dict | None  # None: the method is passed by bare name
    params: dict
    seed: int
    columns: dict = field(default_factory=dict)  # swept values by CSV column, seed excluded

    def kwargs(self) -> dict:
        method = self.method if self.method_params is None else (self.method, dict(self.method_params))
        return {"method": method, **self.params}

    def settings(self) -> dict:
        return {"method": self.method, "method_params": self.method_params, "params": self.params,
                "seed": self.seed}


@dataclass(frozen=True)
class Grid:
    """A validated grid (:func:`load_grid`); :meth:`runs` expands it."""

    methods: tuple
    fixed: dict
    swept: dict
    method_fixed: dict
    method_swept: dict
    seeds: tuple
    source: str = "grid"

    def to_dict(self) -> dict:
        """The grid in its file form (normalised), e.g. for ``grid.json``."""
        params = {**self.fixed, **{k: list(v) for k, v in self.swept.items()}}
        mp = {m: {**self.method_fixed.get(m, {}), **{k: list(v) for k, v in
                                                     self.method_swept.get(m, {}).items()}}
              for m in self.methods if m in self.method_fixed or m in self.method_swept}
        return {"method": list(self.methods), "params": params, "method_params": mp,
                "seeds": list(self.seeds)}

    def runs(self) -> list[Run]:
        """Every run, in order: methods, then swept parameters, then method parameters, then seeds."""
        clash = set(self.swept) | set(RESERVED_COLUMNS)
        out = []
        for method in self.methods:
            m_swept = self.method_swept.get(method, {})
            has_mp = method in self.method_fixed or method in self.method_swept
            for values in itertools.product(*self.swept.values()):
                top = dict(zip(self.swept, values))
                for m_values in itertools.product(*m_swept.values()):
                    mine = dict(zip(m_swept, m_values))
                    mp = {**self.method_fixed.get(method, {}), **mine} if has_mp else None
                    cols = {**top, **{(f"{method}.{k}" if k in clash else k): v
                                      for k, v in mine.items()}}
                    for seed in self.seeds:
                        out.append(_make_run(method, mp, {**self.fixed, **top}, seed, cols))
        return out


def _make_run(method, mp, params, seed, cols) -> Run:
    h = run_hash({"method": method, "method_params": mp, "params": params, "seed": seed})
    parts = [method] + [f"{k}={_short(v)}" for k, v in cols.items()] + [f"seed={seed}"]
    prefix = re.sub(r"[^A-Za-z0-9._=+-]+", "_", "-".join(parts))[:80]
    return Run(f"{prefix}-{h}", h, method, mp, params, seed, cols)


def canonical(value):
    """Plain JSON data for hashing: tuples and arrays as lists, whole floats as ints."""
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy arrays and scalars
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def run_hash(settings: dict) -> str:
    text = json.dumps(canonical(settings), sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "+".join(_short(v) for v in value)
    return str(value)[:20]


# ---------------------------------------------------------------------------------------------------
# reading and validation


def read_grid_file(path) -> dict:
    """The mapping in a ``.yaml``/``.yml``/``.json`` grid file; ``ValueError`` naming the file."""
    path = Path(path)
    where = f"grid file {path}"
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        raise ValueError(f"{where}: use a .yaml, .yml or .json file (the extension picks the format)")
    if not path.is_file():
        raise FileNotFoundError(f"grid file not found: {path}")
    text = path.read_text(encoding="utf-8")
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{where}: invalid JSON: {err.msg} at line {err.lineno}, "
                             f"column {err.colno}") from None
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            problem = getattr(err, "problem", None) or str(err)
            raise ValueError(f"{where}: invalid YAML: {problem}{at}") from None
    if data is None:
        raise ValueError(f"{where}: the file is empty")
    return data


def load_grid(grid) -> Grid:
    """Validate ``grid`` (a mapping, or the path of a YAML/JSON file) into a :class:`Grid`.

    Raises ``ValueError`` naming the source and the offending key path, e.g.
    ``grid file g.yaml: params.perplxity: unknown smallvis() argument (did you mean 'perplexity'?)``.
    """
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, (str, Path)):
        source, data = f"grid file {grid}", read_grid_file(grid)
    else:
        source, data = "grid", grid

    def fail(key, message):
        raise ValueError(f"{source}: {key}: {message}" if key else f"{source}: {message}")

    if not isinstance(data, dict):
        fail(None, f"expected a mapping with keys {', '.join(TOP_KEYS)}; got {type(data).__name__}")
    data = dict(data)
    if "methods" in data:
        if "method" in data:
            fail("methods", "give either 'method' or 'methods', not both")
        data["method"] = data.pop("methods")
    for key in data:
        if key not in TOP_KEYS:
            fail(key, f"unknown key{_hint(key, TOP_KEYS)}; valid keys: {', '.join(TOP_KEYS)}")
    methods = _methods(data.get("method", "tsne"), fail)
    fixed, swept = _params(data.get("params", {}), "params", _smallvis_arguments(), fail,
                           "smallvis() argument")
    method_fixed, method_swept = _method_params(data.get("method_params", {}), methods, fail)
    seeds = _seeds(data.get("seeds", [0]), fail)
    return Grid(methods, fixed, swept, method_fixed, method_swept, seeds, source)


def _hint(name, choices) -> str:
    close = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _resolve_method(name, key, fail) -> str:
    from .._util.names import InvalidNameError
    from ..methods import REGISTRY

    if not isinstance(name, str):
        fail(key, f"a method name is a string such as 'tsne' (its parameters go under "
                  f"method_params); got {name!r}")
    try:
        from .._util.names import match_name

        return match_name(name, REGISTRY, "method")
    except InvalidNameError as err:
        text = str(err).split(" Valid names:")[0].rstrip(".")
        fail(key, f"{text} (see 'smallvis methods')")


def _methods(value, fail) -> tuple:
    items = value if isinstance(value, list) else [value]
    if not items:
        fail("method", "empty list: name at least one method")
    out = []
    for i, name in enumerate(items):
        key = f"method[{i}]" if isinstance(value, list) else "method"
        resolved = _resolve_method(name, key, fail)
        if resolved in out:
            fail(key, f"method {resolved!r} is listed twice")
        out.append(resolved)
    return tuple(out)


def _smallvis_arguments() -> list:
    import inspect

    from ..api import smallvis

    return list(inspect.signature(smallvis).parameters)


def _params(value, where, allowed, fail, what) -> tuple[dict, dict]:
    if not isinstance(value, dict):
        fail(where, f"expected a mapping of {what}s to values; got {type(value).__name__}")
    fixed, swept = {}, {}
    for name, v in value.items():
        key = f"{where}.{name}"
        if name in FORBIDDEN and where == "params":
            fail(key, f"not allowed in a grid: {FORBIDDEN[name]}")
        if name not in allowed:
            fail(key, f"unknown {what}{_hint(name, allowed)}")
        if isinstance(v, list):
            if not v:
                fail(key, "empty list: give at least one value (a list is swept)")
            seen = set()
            for item in v:
                token = json.dumps(canonical(item), sort_keys=True)
                if token in seen:
                    fail(key, f"value {item!r} is listed twice")
                seen.add(token)
            swept[name] = list(v)
        else:
            fixed[name] = v
    return fixed, swept


def _method_params(value, methods, fail) -> tuple[dict, dict]:
    from ..methods import REGISTRY

    if not isinstance(value, dict):
        fail("method_params", f"expected a mapping of method names to parameters; got "
                              f"{type(value).__name__}")
    fixed, swept = {}, {}
    for name, params in value.items():
        key = f"method_params.{name}"
        method = _resolve_method(name, key, fail)
        if method not in methods:
            fail(key, f"method {method!r} is not in the grid's 'method' ({', '.join(methods)})")
        if method in fixed:
            fail(key, f"method {method!r} appears twice")
        fixed[method], swept[method] = _params(params if params is not None else {}, key,
                                               list(REGISTRY[method].params), fail,
                                               f"parameter of method {method!r}")
    return fixed, swept


def _seeds(value, fail) -> tuple:
    def whole(v):
        return isinstance(v, int) and not isinstance(v, bool) or (
            hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu")

    if whole(value):
        if value < 1:
            fail("seeds", f"a number of seeds must be at least 1; got {value}")
        return tuple(range(int(value)))
    if not isinstance(value, list):
        fail("seeds", f"expected a list of whole numbers or a count; got {value!r}")
    if not value:
        fail("seeds", "empty list: give at least one seed")
    out = []
    for i, v in enumerate(value):
        if not whole(v) or v < 0:
            fail(f"seeds[{i}]", f"seeds must be whole numbers >= 0; got {v!r}")
        if int(v) in out:
            fail(f"seeds[{i}]", f"seed {v} is listed twice")
        out.append(int(v))
    return tuple(out)
