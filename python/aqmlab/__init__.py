"""aqmlab: a laboratory for active queue management research.

>>> import aqmlab
>>> sc = aqmlab.Scenario.load("examples/mm1k.toml")   # doctest: +SKIP
>>> res = aqmlab.run(sc, seed=1)                         # doctest: +SKIP
>>> res.queue("q")["loss_rate"]                          # doctest: +SKIP
"""

from __future__ import annotations

from aqmlab._engine import ENGINE_VERSION
from aqmlab.exceptions import AqmlabError, ConfigError
from aqmlab.experiment import Experiment
from aqmlab.result import Result
from aqmlab.scenario import Scenario

__version__ = ENGINE_VERSION

__all__ = ["AqmlabError", "ConfigError", "Experiment", "Result", "Scenario", "run", "__version__"]


def run(scenario: Scenario | dict, *, seed: int | None = None) -> Result:
    """Runs a scenario once and returns its :class:`Result`.

    ``seed`` defaults to the scenario's own ``seed`` (1 if it has none). The
    engine releases the GIL, so runs on several threads proceed in parallel.
    Raises :class:`ConfigError` listing every problem if the scenario is
    invalid.
    """
    from aqmlab import _engine

    if isinstance(scenario, dict):
        scenario = Scenario.from_dict(scenario)
    scenario.validate()
    return Result.from_json(_engine.run(scenario.to_json(), scenario.seed if seed is None else seed))
