"""Experiments: a base scenario, sweep axes over dotted key paths, a number
of replications, and the metrics to report.

An experiment file::

    name = "red-vs-droptail"
    scenario = "tcp-dumbbell.toml"        # a path (relative to this file) or an inline [scenario] table
    replications = 3
    seed = 1                              # replication r runs with seed + r (default 1)
    metrics = ["queues.bottleneck.loss_rate", "queues.bottleneck.qdelay_mean_s"]

    [sweep]
    "traffic[0].count" = [8, 16, 32]
    "topology.qdisc" = { values = [ {kind = "droptail", limit = "300pkt"}, {kind = "red", limit = "300pkt"} ],
                         labels = ["droptail", "red"] }

The sweep is the cross product of the axes, except that axes named together
in a ``zip = [["a", "b"]]`` group move together (they must have the same
length). Replication r of every sweep point runs with the same seed, so the
alternatives are compared on common random numbers: the same draws for the
same traffic, which narrows the confidence interval of their differences.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import itertools
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab import _engine
from aqmlab.exceptions import AqmlabError, ConfigError
from aqmlab.scenario import Scenario, parse_assignments

if TYPE_CHECKING:
    import pandas as pd

#: The keys of an experiment file, each with its JSON Schema and help
#: (``aqmlab schema experiment``); :meth:`Experiment.from_dict` reads these.
#: Sweep values are free-form: an axis may set any key, or a whole table.
KEYS: dict[str, dict[str, Any]] = {
    "name": {"type": "string", "description": "the experiment's name in the store and reports; default: the file's"},
    "scenario": {"description": "the base scenario: a scenario file's path (relative to this file) or an inline "
                                "[scenario] table",
                 "anyOf": [{"type": "string"}, {"$ref": "#/$defs/scenario"}]},
    "replications": {"type": "integer", "minimum": 1, "maximum": 100_000, "default": 1,
                     "description": "runs per sweep point"},
    "seed": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1, "default": 1,
             "description": "replication r runs with seed + r at every point"},
    "metrics": {"type": "array", "items": {"type": "string"},
                "description": "summary key paths to report, e.g. \"queues.bottleneck.loss_rate\""},
    "sweep": {"type": "object",
              "description": "axes: a quoted key path of the scenario = a list of values, or { values, labels }",
              "additionalProperties": {"anyOf": [
                  {"type": "array", "minItems": 1},
                  {"type": "object", "required": ["values"], "additionalProperties": False,
                   "properties": {"values": {"type": "array", "minItems": 1},
                                  "labels": {"type": "array", "items": {"type": "string"}}}},
              ]}},
    "zip": {"type": "array", "items": {"type": "array", "items": {"type": "string"}},
            "description": "groups of swept key paths that move together"},
    "warmup": {"$ref": "#/$defs/scenario/properties/warmup",
               "description": "the base scenario's warmup, replaced"},
}
_KEYS = tuple(KEYS)
# Every point is checked and every run listed before the first one starts,
# so a cross product that has grown by mistake (an axis left out of its zip
# group) is refused rather than left to fill the memory.
MAX_POINTS = 100_000
MAX_RUNS = 1_000_000
#: What the store's ``simulator`` column says of an emulated run
#: (``aqmlab sweep --emulate``); aqmlab's simulator is ``"aqmlab"``.
EMULATION = "emulation"


@dataclass(frozen=True)
class Axis:
    """One swept key path, its values and a label for each."""

    path: str
    values: tuple[Any, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Point:
    """One sweep point: its index and the (path, value, label) of every axis."""

    index: int
    settings: tuple[tuple[str, Any, str], ...]

    def labels(self) -> dict[str, str]:
        return {path: label for path, _, label in self.settings}


@dataclass(frozen=True)
class RunSpec:
    """One run of an experiment: a sweep point, a replication and its seed,
    the key that identifies it in a store (hash of the scenario, the seed
    and the engine version) and whether it is emulated rather than
    simulated."""

    point: Point
    replication: int
    seed: int
    scenario: Scenario = field(compare=False)
    key: str = ""
    emulated: bool = False


@dataclass(frozen=True)
class SweepOutcome:
    """What :meth:`Experiment.sweep` did: the store, how many runs were ok,
    failed or already stored (``counts``), the table of mean and 95% CI per
    point and metric, and the failed runs grouped by point and error as
    (labels, number of runs, error)."""

    store: Path
    counts: dict[str, int]
    table: pd.DataFrame
    failures: list[tuple[dict[str, str], int, str]]


def _labels(values: list[Any]) -> list[str]:
    """Labels for values given without: a table's `kind` if that tells them
    apart, otherwise each value's text."""
    short = [str(v["kind"]) if isinstance(v, dict) and "kind" in v else None for v in values]
    if all(x is not None for x in short) and len(set(short)) == len(short):
        return [str(x) for x in short]
    return [v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str) for v in values]


def run_key(experiment: str, labels: dict[str, str], scenario: Scenario, seed: int, emulated: bool = False) -> str:
    """The store key of a run: SHA-256 over the experiment's name, the sweep
    point's labels, the canonical scenario JSON, the seed and the engine
    version, and for an emulated run the word "emulation" too, so the same
    point, replication and seed emulated and simulated are two runs. A run
    is reused only by the same experiment at the same point with the same
    scenario, seed and engine; any change to the scenario or a new engine
    makes a new run. (A simulated run's key has no such field, so stores
    written before emulation keep their keys.)"""
    fields = {"experiment": experiment, "labels": labels, "scenario": scenario.to_dict(), "seed": seed,
              "engine": _engine.ENGINE_VERSION}
    if emulated:
        fields["simulator"] = EMULATION
    blob = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class Experiment:
    """A sweep over a base scenario, with replications.

    >>> exp = Experiment.from_dict({"scenario": "examples/mm1k.toml", "replications": 2,
    ...                             "sweep": {"duration": ["10s", "20s"]}})
    >>> len(exp.runs())
    4
    """

    def __init__(self, name: str, base: Scenario, axes: list[Axis], zips: list[list[str]], replications: int,
                 seed: int, metrics: list[str], source: str | None = None, text: str | None = None):
        self.name = name
        self.base = base
        self.axes = axes
        self.zips = zips
        self.replications = replications
        self.seed = seed
        self.metrics = metrics
        self.source = source
        self.text = text

    # Construction -----------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path, assignments: list[str] | None = None) -> "Experiment":
        """Reads an experiment file; `assignments` (``key.path=value``, as
        ``aqmlab sweep --set`` gives them) override keys of its base
        scenario."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError([("", f"{path}: cannot read the experiment file: {e}")]) from None
        except ValueError as e:  # a path no system call takes, e.g. one with a NUL character
            raise ConfigError([("", f"{str(path)!r}: cannot read the experiment file: {e}")]) from None
        return cls.from_toml(text, base_dir=path.parent, source=str(path), assignments=assignments)

    @classmethod
    def from_toml(cls, text: str, base_dir: str | Path = ".", source: str | None = None,
                  assignments: list[str] | None = None) -> "Experiment":
        """An experiment from the text of an experiment file; `source` names
        it in errors (and gives its default name)."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError([("", f"{source or 'experiment'}: TOML syntax error: {e}")]) from None
        return cls.from_dict(data, base_dir=base_dir, source=source, text=text, assignments=assignments)

    @classmethod
    def from_dict(cls, data: dict[str, Any], base_dir: str | Path = ".", source: str | None = None,
                  text: str | None = None, assignments: list[str] | None = None) -> "Experiment":
        problems: list[tuple[str, str]] = []
        for k in data:
            if k not in _KEYS:
                guess = difflib.get_close_matches(k, _KEYS, n=1, cutoff=0.75)
                hint = f"; did you mean \"{guess[0]}\"?" if guess else ""
                problems.append((k, f"unknown key{hint} (allowed here: {', '.join(_KEYS)})"))
        base = cls._base(data.get("scenario"), Path(base_dir), problems)
        reps = data.get("replications", 1)
        if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= 100_000:
            problems.append(("replications", f"must be a whole number from 1 to 100000, got {reps!r}"))
            reps = 1
        seed = data.get("seed", 1)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            problems.append(("seed", f"must be a whole number from 0 to 2^63 - 1, got {seed!r}"))
            seed = 1
        metrics = data.get("metrics", [])
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            problems.append(("metrics", f"must be a list of summary key paths, got {metrics!r}"))
            metrics = []
        axes = cls._axes(data.get("sweep", {}), problems)
        zips = cls._zips(data.get("zip", []), axes, problems)
        if "warmup" in data and base is not None:
            base = base.with_(warmup=data["warmup"])
        if assignments and base is not None:
            # After the experiment's own warmup: the command line has the last word.
            try:
                base = base.with_set(assignments)
            except ConfigError as e:
                problems.extend(e.problems)
            else:
                problems.extend(cls._swept_assignments(base, assignments, axes))
        if problems:
            raise ConfigError(problems)
        assert base is not None
        name = str(data.get("name", Path(source).stem if source else base.name))
        if text is None:  # built in Python: keep what was given, for the store and reports
            text = json.dumps({**data, "--set": assignments} if assignments else data, indent=2, default=str)
        elif assignments:  # the store and reports show the file as it was run
            text = text.rstrip("\n") + "\n\n# Run with these overrides of the base scenario (aqmlab sweep --set):\n" + \
                "".join(f"#   {a}\n" for a in assignments)
        exp = cls(name, base, axes, zips, reps, seed, metrics, source, text)
        points = math.prod(len(g[0].values) for g in exp._groups())
        if points > MAX_POINTS or points * reps > MAX_RUNS:
            sizes = " x ".join(str(len(g[0].values)) for g in exp._groups())
            raise ConfigError([("sweep", f"makes {points} points ({sizes}) x {reps} replications = {points * reps} "
                                         f"runs; at most {MAX_POINTS} points and {MAX_RUNS} runs (axes listed "
                                         "together in zip move together instead of multiplying)")])
        exp._check_points()
        return exp

    @staticmethod
    def _base(spec: Any, base_dir: Path, problems: list[tuple[str, str]]) -> Scenario | None:
        if isinstance(spec, str):
            try:
                return Scenario.load(base_dir / spec)
            except ConfigError as e:
                problems.extend(("scenario", line) for line in e.lines())
                return None
        if isinstance(spec, dict):
            return Scenario.from_dict(spec)
        problems.append(("scenario", f"must be a scenario file path or an inline table, got {spec!r}"))
        return None

    @staticmethod
    def _swept_assignments(base: Scenario, assignments: list[str], axes: list[Axis]) -> list[tuple[str, str]]:
        """A --set of a swept key (or of a key inside a swept table) would be
        replaced at every sweep point: an error rather than a silent no-op."""
        problems = []
        for path in parse_assignments(assignments):
            keys = base.resolve(path)
            for a in axes:
                try:
                    swept = base.resolve(a.path)
                except ConfigError:
                    continue  # reported by the point checks
                if keys[:len(swept)] == swept:
                    problems.append((path, f"is swept by this experiment (sweep.\"{a.path}\"), which would replace "
                                           "the --set value at every point; drop one of them"))
        return problems

    @staticmethod
    def _axes(sweep: Any, problems: list[tuple[str, str]]) -> list[Axis]:
        if not isinstance(sweep, dict):
            problems.append(("sweep", f"must be a table of key path = list of values, got {sweep!r}"))
            return []
        axes = []
        for path, spec in sweep.items():
            where = f"sweep.\"{path}\""
            labels = None
            if isinstance(spec, dict):
                if "values" not in spec:
                    problems.append((where, "is a table without `values`; a key path with dots must be quoted, "
                                            "e.g. \"topology.qdisc.limit\" = [\"50pkt\", \"100pkt\"]"))
                    continue
                extra = set(spec) - {"values", "labels"}
                if extra:
                    problems.append((where, f"unknown key(s) {sorted(extra)}; an axis table has values and labels"))
                labels, spec = spec.get("labels"), spec.get("values")
            if not isinstance(spec, list) or not spec:
                problems.append((where, f"must be a non-empty list of values (or {{values, labels}}), got {spec!r}"))
                continue
            given = labels is not None
            if not given:
                labels = _labels(spec)
            elif not isinstance(labels, list) or len(labels) != len(spec) or not all(isinstance(x, str) for x in labels):
                problems.append((f"{where}.labels", f"must be {len(spec)} strings, one per value, got {labels!r}"))
                continue
            if len(set(labels)) != len(labels):
                problems.append((f"{where}.labels", f"must be distinct, got {labels!r}") if given else
                                (where, f"repeats a value: {labels!r}"))
                continue
            axes.append(Axis(path, tuple(spec), tuple(labels)))
        return axes

    @staticmethod
    def _zips(zips: Any, axes: list[Axis], problems: list[tuple[str, str]]) -> list[list[str]]:
        names = {a.path: a for a in axes}
        ok = isinstance(zips, list) and all(isinstance(g, list) and all(isinstance(p, str) for p in g) for g in zips)
        if not ok:
            problems.append(("zip", f"must be a list of groups of swept key paths, got {zips!r}"))
            return []
        seen: set[str] = set()
        for i, group in enumerate(zips):
            for p in group:
                if p not in names:
                    problems.append((f"zip[{i}]", f"\"{p}\" is not a swept key path; swept: {sorted(names)}"))
                elif p in seen:
                    problems.append((f"zip[{i}]", f"\"{p}\" is in more than one group"))
                seen.add(p)
            lengths = {len(names[p].values) for p in group if p in names}
            if len(lengths) > 1:
                problems.append((f"zip[{i}]", f"axes that move together need equal lengths, got {sorted(lengths)}"))
        return zips

    def _check_points(self) -> None:
        """Every swept key path must lead somewhere in the base scenario, and
        a problem that every sweep point has (a misspelt key, an invalid
        base scenario) is an error of the experiment, reported before
        anything runs. A problem of some points only (a swept value the
        engine rejects) is not: those runs are stored as failed with the
        engine's message, and the others go on."""
        problems: list[tuple[str, str]] = []
        for a in self.axes:
            try:
                self.base.with_(**{a.path: a.values[0]})
            except ConfigError as e:
                problems.extend((f"sweep.\"{a.path}\"", m) for _, m in e.problems)
        if problems:
            raise ConfigError(problems)
        common: set[tuple[str, str]] | None = None
        for p in self.points():
            try:
                found = set(self.scenario(p).problems())
            except ConfigError as e:
                found = set(e.problems)
            common = found if common is None else common & found
            if not common:
                return
        if common:
            raise ConfigError(sorted(common))

    # The sweep --------------------------------------------------------------

    def points(self) -> list[Point]:
        """The sweep points, in order: cross product over the groups (a zip
        group or a lone axis), the first axis varying slowest."""
        choices = [[tuple((a.path, a.values[i], a.labels[i]) for a in g) for i in range(len(g[0].values))]
                   for g in self._groups()]
        return [Point(i, tuple(s for part in combo for s in part)) for i, combo in
                enumerate(itertools.product(*choices))]

    def _groups(self) -> list[list[Axis]]:
        """The axes grouped as they vary: a zip group together, every other
        axis alone, in the order of their first axis."""
        by_path = {a.path: a for a in self.axes}
        groups: list[list[Axis]] = []
        placed: set[str] = set()
        for a in self.axes:
            if a.path not in placed:
                group = next((g for g in self.zips if a.path in g), [a.path])
                groups.append([by_path[p] for p in group])
                placed.update(group)
        return groups

    def scenario(self, point: Point) -> Scenario:
        return self.base.with_(**{path: copy.deepcopy(value) for path, value, _ in point.settings})

    def runs(self, replications: int | None = None, emulate: bool = False) -> list[RunSpec]:
        """Every run: point-major, replication r with seed `seed + r`; with
        `emulate`, the emulated runs (other keys)."""
        reps = self.replications if replications is None else replications
        out = []
        for p in self.points():
            sc = self.scenario(p)
            for r in range(reps):
                seed = self.seed + r
                out.append(RunSpec(p, r, seed, sc, run_key(self.name, p.labels(), sc, seed, emulate), emulate))
        return out

    def axis_paths(self) -> list[str]:
        return [a.path for a in self.axes]

    def run(self, executor: str = "local", jobs: int | None = None, store: str | Path | None = None,
            rerun: bool = False, scheduler: str | None = None, progress: bool = False, emulate: bool = False):
        """Runs the experiment (skipping runs already in the store) and
        returns the table of mean and 95% CI per point and metric."""
        return self.sweep(executor=executor, jobs=jobs, store=store, rerun=rerun, scheduler=scheduler,
                          progress=progress, emulate=emulate).table

    def sweep(self, executor: str = "local", jobs: int | None = None, store: str | Path | None = None,
              rerun: bool = False, scheduler: str | None = None, progress: bool = False,
              emulate: bool = False) -> SweepOutcome:
        """:meth:`run`, returning besides the table what became of the runs
        (``aqmlab sweep`` prints it). The experiment checked its points when
        it was made; a run is checked only by the engine as it reads it, and
        one it rejects is stored as failed. If the sweep cannot start (e.g.
        the Dask scheduler is out of reach), a store file this call created
        is removed again.

        With `emulate`, every run goes through :func:`aqmlab.emulate` (real
        Linux stacks, in real time) instead of the simulator, one after
        another in this thread; `jobs` above 1 and the Dask executor are
        refused, as is a machine where emulation is impossible. Emulated
        runs are stored beside the simulated ones, under keys of their own,
        and the table has a row per point for each (column ``engine``). A
        Ctrl-C abandons the emulation under way (its namespaces are removed)
        and raises KeyboardInterrupt; every run finished before it is
        stored."""
        from aqmlab.store import Store
        from aqmlab.sweep import execute, table

        path = Path(store) if store is not None else self.default_store()
        existed = path.exists()
        try:
            with Store(path) as st:
                counts = execute(self, st, executor=executor, jobs=jobs, rerun=rerun, scheduler=scheduler,
                                 progress=progress, emulate=emulate)
                return SweepOutcome(path, counts, table(st, self.name, self.metrics or None), st.failures(self.name))
        except AqmlabError:
            # Raised before any run started: a store this call created
            # holds nothing worth keeping.
            if not existed:
                for p in (path, path.with_name(path.name + ".wal")):
                    p.unlink(missing_ok=True)
            raise

    def default_store(self) -> Path:
        if self.source:
            return Path(self.source).with_suffix(".duckdb")
        return Path(f"{self.name}.duckdb")

    def __repr__(self) -> str:
        return f"<Experiment {self.name!r}: {len(self.points())} points x {self.replications} replications>"
