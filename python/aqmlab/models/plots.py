"""Plotting helpers that put a model's prediction on a matplotlib axis, in
one style, so reports can overlay models on simulated points (models drawn
as lines, simulations as markers with error bars)."""

from __future__ import annotations

from typing import Any

import numpy as np

from aqmlab.models import jou
from aqmlab.models.bonald import QueueSize, RunLength

MODEL_STYLE: dict[str, Any] = {"linestyle": "--", "linewidth": 1.4}


def model_curve(ax: Any, x: Any, y: Any, label: str, **style: Any) -> Any:
    """A model's prediction ``y(x)`` as a dashed line."""
    (line,) = ax.plot(np.asarray(x, dtype=float), np.asarray(y, dtype=float), label=label, **{**MODEL_STYLE, **style})
    return line


def run_lengths(ax: Any, run: RunLength, label: str, n_max: int = 15, **style: Any) -> Any:
    """P(N = n), n = 1..n_max, of a loss-run distribution, on a log scale."""
    n = run.n[:n_max]
    ax.set_yscale("log")
    ax.set_xlabel("consecutive drops n")
    ax.set_ylabel("P(N = n)")
    return model_curve(ax, n, run.distribution[:n_max], label, marker=".", **style)


def queue_sizes(ax: Any, q: QueueSize, label: str, **style: Any) -> Any:
    """The queue-size distribution pi(k) as a step line."""
    ax.set_xlabel("packets in the system k")
    ax.set_ylabel("pi(k)")
    return model_curve(ax, q.k, q.distribution, label, drawstyle="steps-mid", **style)


def lindley_map(ax: Any, *, S: float, W_bar: float, C: float, d: np.ndarray, B: float, points: int = 400,
                label: str | None = None, reference: bool = True) -> Any:
    """Jou et al.'s map f(q) clipped to [0, B] against q; with `reference`
    also the diagonal and the fixed point q_e (drawn last): the map's slope
    where it crosses the diagonal tells calm from oscillation. Call it once
    per S with ``reference=False`` after the first to overlay several maps."""
    q = np.linspace(0, B, points)
    f = np.clip(jou.drift_map(q, S=S, W_bar=W_bar, C=C, d=d), 0, B)
    line = model_curve(ax, q, f, label or f"f(q), S = {S:g} s", linestyle="-")
    if reference:
        ax.plot(q, q, color="grey", linewidth=0.8, label="q (diagonal)")
        q_e = jou.equilibrium(W_bar=W_bar, C=C, d=d)
        ax.plot([q_e], [q_e], "o", color="k", label=f"q_e = {q_e:.4g} bits")
    ax.set_xlabel("q[n], bits")
    ax.set_ylabel("q[n+1], bits")
    return line
