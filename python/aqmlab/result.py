"""The result of one run. Every key of the summary is defined in
``docs/metrics.md``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def _key(name: str, doc: str = "") -> Any:
    """A read-only attribute that is the summary's key ``name``."""
    return property(lambda self: self[name], doc=doc or f"The summary's ``{name}``.")


class QueueSummary(dict[str, Any]):
    """One queue's summary (``queues.<name>``): still the engine's dict, so
    ``q["loss_rate"]`` reads as before, with its keys as typed attributes.
    The keys are those of ``QueueSummary`` in ``crates/sim/src/monitor/summary.rs``."""

    arrivals: int = _key("arrivals")
    departures: int = _key("departures")
    drops: int = _key("drops")
    drops_expired: int = _key("drops_expired")
    marks: int = _key("marks")
    loss_rate: float | None = _key("loss_rate")
    qdelay_mean_s: float | None = _key("qdelay_mean_s")
    qdelay_std_s: float | None = _key("qdelay_std_s")
    qdelay_max_s: float | None = _key("qdelay_max_s")
    qlen_mean_pkts: float = _key("qlen_mean_pkts")
    qlen_var_pkts: float = _key("qlen_var_pkts")
    utilization: float = _key("utilization")
    consecutive_loss: dict[str, Any] = _key("consecutive_loss")
    by_class: dict[str, dict[str, Any]] = _key("by_class")
    qdisc: dict[str, Any] = _key("qdisc", "The discipline's effective parameters; keys depend on its kind.")
    link: dict[str, Any] = _key("link")
    run_totals: dict[str, int] = _key("run_totals")


class GroupSummary(dict[str, Any]):
    """One traffic group's summary (``traffic.<name>``), as
    :class:`QueueSummary` is a queue's. The TCP, web and HTTP/1.1 keys are
    there only for those kinds."""

    kind: str = _key("kind")
    flows: int = _key("flows")
    sent: int = _key("sent")
    delivered: int = _key("delivered")
    drops: int = _key("drops")
    goodput_bps: float = _key("goodput_bps")
    throughput_bps: float = _key("throughput_bps")
    loss_rate: float | None = _key("loss_rate")
    delay_mean_s: float | None = _key("delay_mean_s")
    delay_std_s: float | None = _key("delay_std_s")


class Summary(dict[str, Any]):
    """A run's summary: the engine's dict (what ``aqmlab run --json`` prints,
    what stores keep), with typed accessors for its parts. ``Summary(d)``
    copies only the top level; the parts are wrapped when read."""

    scenario: str = _key("scenario")
    seed: int = _key("seed")
    engine_version: str = _key("engine_version")
    duration_s: float = _key("duration_s")
    warmup_s: float = _key("warmup_s")
    events: int = _key("events")
    wall_s: float = _key("wall_s")
    flows: list[dict[str, Any]] = _key("flows", "One row per flow.")

    @property
    def queues(self) -> dict[str, QueueSummary]:
        return {name: QueueSummary(q) for name, q in self["queues"].items()}

    @property
    def traffic(self) -> dict[str, GroupSummary]:
        return {name: GroupSummary(g) for name, g in self["traffic"].items()}

    def queue(self, name: str = "bottleneck") -> QueueSummary:
        """The summary of queue ``name``."""
        return QueueSummary(self["queues"][name])

    @property
    def bottleneck(self) -> QueueSummary:
        """The queue called ``bottleneck`` (the dumbbell's)."""
        return self.queue("bottleneck")

    def group(self, name: str) -> GroupSummary:
        """The summary of traffic group ``name``."""
        return GroupSummary(self["traffic"][name])

    @property
    def jain(self) -> float | None:
        """Jain's index over the bulk TCP flows (None without any)."""
        return self["fairness"]["jain"] if "fairness" in self else None


class Result:
    """What a run produced.

    ``summary``: the summary dict (queues, traffic,
    flows, run information); ``flows``: one row per flow; ``series``: the
    sampled time series, one column per traced quantity (empty without a
    ``[trace]`` table).
    """

    def __init__(self, data: dict[str, Any]):
        self.summary: Summary = Summary(data["summary"])
        self._series: dict[str, list[float]] = data.get("series", {})

    @classmethod
    def from_json(cls, text: str) -> "Result":
        return cls(json.loads(text))

    @property
    def flows(self) -> pd.DataFrame:
        import pandas as pd  # here, not at the top: a run that prints its summary needs no pandas

        return pd.DataFrame(self.summary.flows)

    @property
    def series(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self._series)

    def queue(self, name: str = "bottleneck") -> QueueSummary:
        """The summary of one queue (a dict, with its keys as attributes)."""
        return self.summary.queue(name)

    @property
    def bottleneck(self) -> QueueSummary:
        return self.summary.bottleneck

    def group(self, name: str) -> GroupSummary:
        """The summary of one traffic group (a dict, with its keys as attributes)."""
        return self.summary.group(name)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.summary, indent=indent)

    def __repr__(self) -> str:
        s = self.summary
        return f"<Result {s.scenario!r} seed={s.seed} events={s.events}>"
