"""Emulation: a scenario run through real Linux TCP/IP stacks.

Each host of the scenario becomes a network namespace joined by a veth pair
to a router namespace, where a user-space router (the Rust crate
``aqmlab-emu``) forwards the hosts' frames through the scenario's links and
queue disciplines: the same code the simulator runs, on CLOCK_MONOTONIC.
The traffic is real kernel sockets. Runs take real time (a 100 s scenario
takes 100 s) and need root.

>>> import aqmlab
>>> res = aqmlab.emulate("examples/cbr-dumbbell.toml")    # doctest: +SKIP
>>> res.summary["timing"]["late_p99_s"]                   # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from aqmlab import _engine
from aqmlab.exceptions import AqmlabError, ConfigError
from aqmlab.result import Result
from aqmlab.scenario import Scenario


class EmulationUnavailable(AqmlabError):
    """Emulation cannot run on this machine (no root, no network
    namespaces, no iproute2)."""


class EmulationFailed(AqmlabError):
    """The system refused something while an emulation was set up or
    running; everything it had made was removed."""


def unavailable() -> str | None:
    """Why emulation cannot run here, or None if it can."""
    return _engine.emulate_unavailable()


def emulate(scenario: Scenario | dict | str | Path, *, seed: int | None = None) -> Result:
    """Emulates a scenario once, in real time, and returns its :class:`Result`
    (``summary["engine"] == "emulation"``).

    Raises :class:`ConfigError` for an invalid scenario or one with traffic
    emulation does not run, :class:`EmulationUnavailable` where emulation is
    impossible, :class:`EmulationFailed` if the system refuses something, and
    KeyboardInterrupt on Ctrl-C, in every case after removing the namespaces
    it made.
    """
    if isinstance(scenario, (str, Path)):
        scenario = Scenario.load(scenario)
    elif isinstance(scenario, dict):
        scenario = Scenario.from_dict(scenario)
    try:
        text = _engine.emulate(scenario.to_json(), seed)
    except ValueError as e:
        raise ConfigError([tuple(p) for p in e.args[0]]) from None
    except PermissionError as e:
        raise EmulationUnavailable(str(e)) from None
    except OSError as e:
        raise EmulationFailed(str(e)) from None
    return Result.from_json(text)


def cleanup() -> list[str]:
    """Removes the namespaces left by emulations whose process is gone (a
    killed process cannot remove its own); returns their names."""
    return _engine.emulate_cleanup()
