"""aqmlab: a laboratory for active queue management research.

>>> import aqmlab
>>> sc = aqmlab.Scenario.load("examples/mm1k.toml")   # doctest: +SKIP
>>> res = aqmlab.run(sc, seed=1)                         # doctest: +SKIP
>>> res.queue("q").loss_rate                             # doctest: +SKIP
"""

# Importing aqmlab loads only what one run needs (the engine, the scenario
# and result classes, the standard library's json and tomllib), so that the
# command starts in tens of milliseconds. Everything else (Experiment, and
# the submodules that bring numpy, pandas, scipy, duckdb, dask, matplotlib,
# jinja2) is loaded on first use by __getattr__ below;
# tests/test_startup.py checks that it stays so.

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING, Any

from aqmlab._engine import ENGINE_VERSION
from aqmlab.exceptions import AqmlabError, ConfigError
from aqmlab.result import Result
from aqmlab.scenario import Scenario

if TYPE_CHECKING:  # what __getattr__ provides, for type checkers
    from aqmlab import experiment, files, models, report, stats, store, studies, sweep
    from aqmlab.experiment import Experiment

__version__ = ENGINE_VERSION

__all__ = ["AqmlabError", "ConfigError", "Experiment", "Result", "Scenario", "run", "__version__"]

# Attributes loaded on first use: name -> (module, attribute or None for the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    "Experiment": ("aqmlab.experiment", "Experiment"),
    "emulate": ("aqmlab.emulation", "emulate"),
    **{m: (f"aqmlab.{m}", None) for m in ("emulation", "experiment", "files", "models", "report", "stats", "store",
                                          "studies", "sweep")},
}


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'aqmlab' has no attribute {name!r}") from None
    value = _importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def run(scenario: Scenario | dict, *, seed: int | None = None) -> Result:
    """Runs a scenario once and returns its :class:`Result`.

    ``seed`` defaults to the scenario's own ``seed`` (1 if it has none). The
    engine releases the GIL, so runs on several threads proceed in parallel.
    Raises :class:`ConfigError` listing every problem if the scenario is
    invalid.
    """
    from aqmlab.scenario import run_json

    if isinstance(scenario, dict):
        scenario = Scenario.from_dict(scenario)
    return Result.from_json(run_json(scenario.to_json(), seed))
