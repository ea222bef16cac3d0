"""Statistics over replications: mean, standard deviation, n and the
Student-t 95% confidence interval, and batch means for one long run.

The interval for n independent replications with sample mean m and sample
standard deviation s (n - 1 in the denominator) is m +- t_{0.975, n-1} s / sqrt(n).
With one replication there is no interval: the half-width is NaN, never 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from scipy import stats as _st


@dataclass(frozen=True)
class Summary:
    """Mean, sample standard deviation, n and the CI half-width at `level`."""

    mean: float
    std: float
    n: int
    half_width: float
    level: float = 0.95

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def summarize(values: Iterable[float | None], level: float = 0.95) -> Summary:
    """Summary of the finite values given; None and NaN (a metric a run could
    not measure, e.g. loss runs in a run without drops) are left out."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return Summary(math.nan, math.nan, 0, math.nan, level)
    mean = math.fsum(xs) / n
    if n == 1:
        return Summary(mean, math.nan, 1, math.nan, level)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    t = float(_st.t.ppf(0.5 + level / 2, n - 1))
    return Summary(mean, std, n, t * std / math.sqrt(n), level)


def batch_means(series: Sequence[float], batches: int = 10, level: float = 0.95) -> Summary:
    """The batch-means interval for the mean of one long, stationary series:
    the series (warm-up already removed) is cut into `batches` equal
    consecutive batches (a remainder at the end is dropped) and the batch
    averages are treated as independent replications. Batches should be long
    against the series' correlation time for this to hold."""
    if batches < 2:
        raise ValueError(f"batches must be at least 2, got {batches}")
    size = len(series) // batches
    if size == 0:
        raise ValueError(f"a series of {len(series)} values cannot make {batches} batches")
    return summarize([math.fsum(series[i * size : (i + 1) * size]) / size for i in range(batches)], level)
