"""Scenarios: reading TOML files, overriding keys, validating.

A scenario is a plain nested dict, as the TOML file gives it; the engine
validates it (every problem at once, each with its key path) and runs it.
Running checks it anyway (:func:`run_json`), so :meth:`Scenario.validate`
is for callers that want the problems without a run.
"""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from aqmlab import _engine
from aqmlab.exceptions import ConfigError

_TOP_LEVEL = ("name", "duration", "warmup", "seed", "trace", "topology", "traffic")
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _split_path(path: str) -> list[str | int]:
    """``"traffic[0].count"`` or ``"traffic.0.count"`` -> ``["traffic", 0, "count"]``."""
    out: list[str | int] = []
    pos = 0
    for m in _SEGMENT.finditer(path):
        gap = path[pos : m.start()]
        if gap not in ("", "."):
            raise ConfigError([(path, "is not a key path such as topology.qdisc.limit or traffic[0].count")])
        key, index = m.group(1), m.group(2)
        if index is not None:
            out.append(int(index))
        elif key.isdigit():
            out.append(int(key))
        else:
            out.append(key)
        pos = m.end()
    if not out or path[pos:] not in ("",):
        raise ConfigError([(path, "is not a key path such as topology.qdisc.limit or traffic[0].count")])
    return out


def parse_value(text: str) -> Any:
    """A value as written on the command line: a TOML value if it parses as
    one (``3``, ``0.1``, ``true``, ``"x"``, ``{kind = "red"}``, ``[1, 2]``),
    otherwise the text itself (so ``--set topology.qdisc.limit=300pkt`` needs
    no quotes)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_assignments(assignments: list[str]) -> dict[str, Any]:
    """Command-line ``key.path=value`` assignments as {key path: value}."""
    overrides: dict[str, Any] = {}
    for a in assignments:
        path, sep, text = a.partition("=")
        if not sep or not path.strip():
            raise ConfigError([("--set", f"\"{a}\" is not of the form key.path=value")])
        overrides[path.strip()] = parse_value(text.strip())
    return overrides


class Scenario:
    """A scenario: the TOML tree plus where it came from.

    >>> sc = Scenario.from_dict({"duration": "1s"}).with_(**{"topology.kind": "dumbbell"})
    >>> sc.to_dict()["topology"]
    {'kind': 'dumbbell'}
    """

    def __init__(self, data: dict[str, Any], source: str | None = None):
        self._data = data
        self.source = source

    # Construction -----------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        """Reads a scenario TOML file. Unreadable files and TOML syntax errors
        raise :class:`ConfigError` naming the file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError([("", f"{path}: cannot read the scenario file: {e.strerror or e}")]) from None
        except UnicodeDecodeError as e:
            raise ConfigError([("", f"{path}: not a UTF-8 text file ({e.reason})")]) from None
        except ValueError as e:  # a path no system call takes, e.g. one with a NUL character
            raise ConfigError([("", f"{str(path)!r}: cannot read the scenario file: {e}")]) from None
        return cls.loads(text, source=str(path))

    @classmethod
    def loads(cls, text: str, source: str | None = None) -> "Scenario":
        """Reads a scenario from TOML text."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            where = f"{source}: " if source else ""
            raise ConfigError([("", f"{where}TOML syntax error: {e}")]) from None
        return cls(data, source)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        """A scenario from a nested dict (copied)."""
        if not isinstance(data, dict):
            raise ConfigError([("", f"a scenario is a table (dict), got {type(data).__name__}")])
        return cls(copy.deepcopy(data))

    # Overrides --------------------------------------------------------------

    def with_(self, **overrides: Any) -> "Scenario":
        """A copy with keys overridden by dotted path, e.g.
        ``sc.with_(**{"topology.qdisc.kind": "bernoulli", "traffic[0].count": 8})``.
        A path whose first key is not a top-level key but a key of
        ``[topology]`` is taken under it, so ``"qdisc.limit"`` means
        ``"topology.qdisc.limit"``."""
        data = copy.deepcopy(self._data)
        for path, value in overrides.items():
            _set(data, path, value)
        return Scenario(data, self.source)

    def with_set(self, assignments: list[str]) -> "Scenario":
        """A copy with command-line ``key.path=value`` assignments applied."""
        return self.with_(**parse_assignments(assignments))

    def resolve(self, path: str) -> list[str | int]:
        """The keys `path` leads through in this scenario, as :meth:`with_`
        reads it: ``"qdisc.limit"`` -> ``["topology", "qdisc", "limit"]``."""
        return _resolve(self._data, path)

    # Access -----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """The scenario as the engine reads it. Raises :class:`ConfigError`
        for values the engine cannot read as given (NaN, infinity, whole
        numbers beyond 64 bits, which it would see rounded), naming their
        key."""
        bad = list(_unreadable(self._data, ""))
        if bad:
            raise ConfigError(bad)
        return json.dumps(self._data, default=str, allow_nan=False)

    @property
    def name(self) -> str:
        return str(self._data.get("name", "scenario"))

    @property
    def seed(self) -> int:
        seed = self._data.get("seed", 1)
        return seed if isinstance(seed, int) else 1

    def problems(self) -> list[tuple[str, str]]:
        """Every problem of the scenario as (key path, message); empty if valid."""
        return [tuple(p) for p in _engine.validate(self.to_json())]

    def validate(self) -> "Scenario":
        """Raises :class:`ConfigError` listing every problem; returns self if valid."""
        problems = self.problems()
        if problems:
            raise ConfigError(problems)
        return self

    def __repr__(self) -> str:
        src = f" from {self.source}" if self.source else ""
        return f"<Scenario {self.name!r}{src}>"


def run_json(scenario_json: str, seed: int | None = None) -> str:
    """Runs a scenario (its JSON text) with `seed` (the scenario's own if
    None) and returns the result as JSON text. The engine validates the
    scenario as it reads it, so this is the one check a run needs: an
    invalid scenario raises :class:`ConfigError` listing every problem."""
    try:
        return _engine.run(scenario_json, seed)
    except ValueError as e:
        raise ConfigError([tuple(p) for p in e.args[0]]) from None


def _unreadable(node: Any, path: str):
    """(key path, message) for every NaN or infinite float in a tree, and
    every whole number outside [-2^63, 2^64 - 1]: JSON carries it, but the
    engine reads it as a float, so its message would show another value."""
    if isinstance(node, float) and not math.isfinite(node):
        yield path, f"{node!r} is not allowed; numbers must be finite"
    elif isinstance(node, int) and not isinstance(node, bool) and not -(2**63) <= node < 2**64:
        yield path, f"{node} is out of range; whole numbers must be from -2^63 to 2^64 - 1"
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _unreadable(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _unreadable(v, f"{path}[{i}]")


def _resolve(data: dict[str, Any], path: str) -> list[str | int]:
    keys = _split_path(path)
    topo = data.get("topology")
    if isinstance(keys[0], str) and keys[0] not in _TOP_LEVEL and isinstance(topo, dict) and keys[0] in topo:
        keys = ["topology", *keys]
    return keys


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    keys = _resolve(data, path)
    node: Any = data
    for i, key in enumerate(keys[:-1]):
        nxt = keys[i + 1]
        node = _child(node, key, path, _path_text(keys[:i]), create=[] if isinstance(nxt, int) else {})
    _child(node, keys[-1], path, _path_text(keys[:-1]), create=None)  # checks that `node` can hold it
    node[keys[-1]] = value


def _path_text(keys: list[str | int]) -> str:
    """``["traffic", 0, "count"]`` -> ``"traffic[0].count"``."""
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out


def _shown(node: Any) -> str:
    if isinstance(node, dict):
        return "a table"
    if isinstance(node, list):
        return "a list"
    return json.dumps(node, default=str)


def _child(node: Any, key: str | int, path: str, where: str, create: Any) -> Any:
    """The entry `key` of `node` (the value at `where`), made from `create`
    if it is a missing key of a table and `create` is not None."""
    if isinstance(key, int):
        if not isinstance(node, list):
            raise ConfigError([(path, f"{where or 'the scenario'} is {_shown(node)}, not a list, so it has no "
                                      f"item [{key}]")])
        if key >= len(node):
            raise ConfigError([(path, f"index {key} is out of range")])
        return node[key]
    if not isinstance(node, dict):
        raise ConfigError([(path, f"{where or 'the scenario'} is {_shown(node)}, not a table, so it has no "
                                  f"key \"{key}\"")])
    if key not in node and create is not None:
        node[key] = create
    return node.get(key)
