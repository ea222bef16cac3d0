"""The result of one run. Every key of the summary is defined in
``docs/metrics.md``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class Result:
    """What a run produced.

    ``summary``: the summary dict (queues, traffic,
    flows, run information); ``flows``: one row per flow; ``series``: the
    sampled time series, one column per traced quantity (empty without a
    ``[trace]`` table).
    """

    def __init__(self, data: dict[str, Any]):
        self.summary: dict[str, Any] = data["summary"]
        self._series: dict[str, list[float]] = data.get("series", {})

    @classmethod
    def from_json(cls, text: str) -> "Result":
        return cls(json.loads(text))

    @property
    def flows(self) -> pd.DataFrame:
        import pandas as pd  # here, not at the top: a run that prints its summary needs no pandas

        return pd.DataFrame(self.summary["flows"])

    @property
    def series(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self._series)

    def queue(self, name: str = "bottleneck") -> dict[str, Any]:
        """The summary of one queue."""
        return self.summary["queues"][name]

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.summary, indent=indent)

    def __repr__(self) -> str:
        s = self.summary
        return f"<Result {s['scenario']!r} seed={s['seed']} events={s['events']}>"
