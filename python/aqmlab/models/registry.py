"""How a model is offered on the command line: ``aqmlab model NAME``.

A model module registers a *compute* function with :func:`register`, giving
its command name, a one-line summary and its parameters. The function takes
the parameters as keyword arguments and returns a flat dict of quantities,
keyed by names shared across the models (``mean``, ``var``, ``loss``,
``distribution``, ``q_e``, ``max_p``, ...). A value is a number, a string, a
bool or a 1-D sequence of numbers; the CLI prints the scalars as one table
and each set of equally long sequences as another, and ``--json`` prints the
dict as one object.

A parameter declared with ``many=True`` accepts a list (``0.5,1,2``) or a
range (``0.5:3:0.5``, end included); the compute function then receives a
numpy array and is expected to return one value per element (models are
vectorised over such axes).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from aqmlab.exceptions import ModelError

Quantities = dict[str, Any]


@dataclass(frozen=True)
class Param:
    """One ``--name value`` option of a model command."""

    name: str
    kind: type
    default: Any
    help: str
    many: bool = False
    choices: tuple[str, ...] | None = None
    unit: str | None = None  # "s", "bps" or "B": the value may carry a unit ("150ms", "10Mbps", "1.5KB")


@dataclass(frozen=True)
class CliModel:
    name: str
    summary: str
    params: tuple[Param, ...]
    compute: Callable[..., Quantities]


MODELS: dict[str, CliModel] = {}


def register(name: str, summary: str, *params: Param) -> Callable[[Callable[..., Quantities]], Callable[..., Quantities]]:
    """Decorator: offer ``compute`` as ``aqmlab model NAME``."""

    def wrap(compute: Callable[..., Quantities]) -> Callable[..., Quantities]:
        if name in MODELS:
            raise RuntimeError(f"model {name!r} registered twice")
        MODELS[name] = CliModel(name, summary, tuple(params), compute)
        return compute

    return wrap


# The unit suffixes of scenario files (the engine's unit parsers in crates/sim), per unit.
_UNITS: dict[str, dict[str, float]] = {
    "s": {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0},
    "bps": {"bps": 1.0, "kbps": 1e3, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9},
    "B": {"B": 1.0, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0, "MiB": 1024.0**2},
}
_NUMBER_UNIT = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf)\s*([A-Za-z]*)\s*")


def _scalar(p: Param, text: str) -> Any:
    """One value of ``p`` from the command line's text."""
    where = f"--{p.name}: {text!r}"
    if p.kind is str:
        if p.choices is not None and text not in p.choices:
            raise ModelError(f"{where} is not one of {', '.join(p.choices)}")
        return text
    if p.kind is bool:
        words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
        if text.lower() not in words:
            raise ModelError(f"{where} is not a boolean (true or false)")
        return words[text.lower()]
    m = _NUMBER_UNIT.fullmatch(text)
    units = _UNITS.get(p.unit or "", {})
    if m is None or (m.group(2) and m.group(2) not in units):
        allowed = f"a number, or one with a unit: {', '.join(units)}" if units else "a number"
        raise ModelError(f"{where} is not {allowed}")
    value = float(m.group(1)) * units.get(m.group(2), 1.0)
    if p.kind is int:
        if not (math.isfinite(value) and value == int(value)):
            raise ModelError(f"{where} is not a whole number")
        return int(value)
    return value


def parse(p: Param, text: str) -> Any:
    """The value of ``p`` for ``text``; for a ``many`` parameter a numpy array
    from a list ``a,b,c`` or an inclusive range ``start:stop:step``."""
    if not p.many:
        return _scalar(p, text)
    if text.count(":") == 2:
        start, stop, step = (_scalar(Param(p.name, float, None, "", unit=p.unit), t) for t in text.split(":"))
        if not (step > 0 and stop >= start) or (stop - start) / step > 100_000:
            raise ModelError(f"--{p.name}: {text!r} is not a range start:stop:step with stop >= start and "
                             "0 < step (at most 100000 values)")
        n = int(math.floor((stop - start) / step + 1e-9)) + 1
        values = start + step * np.arange(n)
        if p.kind is int and not np.all(values == np.round(values)):
            raise ModelError(f"--{p.name}: {text!r} does not give whole numbers")
        return values.astype(p.kind)
    items = [t for t in text.split(",") if t.strip()]
    if not items:
        raise ModelError(f"--{p.name}: {text!r} is not a list of values (a,b,c) or a range (start:stop:step)")
    return np.array([_scalar(p, t) for t in items], dtype=p.kind)


def _plain(v: Any) -> Any:
    """A JSON-able value: numpy to Python, non-finite numbers to null."""
    if isinstance(v, np.ndarray | list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def to_json(q: Quantities) -> str:
    """The quantities as one JSON object (non-finite numbers as null)."""
    return json.dumps({k: _plain(v) for k, v in q.items()}, indent=2)


def _cell(v: Any) -> str:
    v = _plain(v)
    if v is None:
        return "-"
    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        return str(v)
    return f"{v:.6g}"


def render(q: Quantities) -> list[tuple[list[str], list[list[str]]]]:
    """The quantities as tables (headers, rows): the scalars as one table of
    quantity and value, then each set of equally long sequences as a table
    with a column each, in the order given."""
    scalars = [[k, _cell(v)] for k, v in q.items() if np.ndim(v) == 0]
    tables = [(["quantity", "value"], scalars)] if scalars else []
    columns: dict[int, list[str]] = {}
    for k, v in q.items():
        if np.ndim(v) == 1:
            columns.setdefault(len(v), []).append(k)
    for n, keys in columns.items():
        tables.append((keys, [[_cell(q[k][i]) for k in keys] for i in range(n)]))
    return tables
