"""Textbook single-server queues, the yardsticks of the simulator's
validation tests.

- M/M/1/K: Poisson arrivals at rate ``lambda``, exponential service at rate
  ``mu``, room for ``K`` packets in the system (waiting plus in service),
  ``rho = lambda / mu``. The stationary number in system is the truncated
  geometric ``pi(k) = rho^k (1 - rho) / (1 - rho^(K+1))`` (uniform when rho =
  1) and an arrival is lost when it finds ``K`` (PASTA), so the loss is
  ``pi(K)`` (Kleinrock, Queueing Systems I, section 3.6).
- M/D/1: Poisson arrivals, constant service time ``1 / mu``, infinite room;
  the Pollaczek-Khinchine mean wait ``Wq = rho / (2 mu (1 - rho))``
  (Kleinrock section 5.6 with ``E[S^2] = 1 / mu^2``).

An aqmlab drop-tail queue with a limit of ``L`` packets holds ``K = L + 1``
in the system: its limit counts the packets waiting behind the one in
transmission, as ns-2's does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aqmlab.exceptions import ModelError
from aqmlab.models.registry import Param, register

__all__ = ["MM1K", "MD1", "mm1k", "md1"]

MAX_K = 1_000_000


@dataclass(frozen=True)
class MM1K:
    loss: float  # P(an arrival is lost) = pi(K)
    mean: float  # mean number in system L
    var: float  # its variance
    distribution: np.ndarray  # pi(0..K)
    delay_mean: float  # mean sojourn of an accepted packet (Little), in units of 1/mu unless mu given


def mm1k(rho: float, K: int, *, mu: float = 1.0) -> MM1K:
    """M/M/1/K at load ``rho`` with room for ``K`` in the system: ``loss =
    pi(K) = rho^K (1 - rho) / (1 - rho^(K+1))`` and ``L = sum k pi(k) = rho /
    (1 - rho) - (K + 1) rho^(K+1) / (1 - rho^(K+1))`` (``1 / (K + 1)`` and
    ``K / 2`` at rho = 1), evaluated from the distribution."""
    if not (np.isfinite(rho) and rho > 0):
        raise ModelError(f"rho (offered load): need a finite number > 0, got {rho}")
    if int(K) != K or K < 1:
        raise ModelError(f"K (room in the system, packets): need a whole number >= 1, got {K}")
    if not (np.isfinite(mu) and mu > 0):
        raise ModelError(f"mu (service rate, packets/s): need a finite number > 0, got {mu}")
    if K > MAX_K:
        raise ModelError(f"K (room in the system, packets): at most {MAX_K}, got {K}")
    k = np.arange(K + 1)
    # pi(k) = rho^k (1 - rho) / (1 - rho^(K+1)), normalised in logs so it
    # stays finite for any rho and K; the loss and mean are then read off pi,
    # which avoids the cancellation of the textbook closed forms near rho = 1.
    logw = k * np.log(rho)
    w = np.exp(logw - logw.max())
    pi = w / w.sum()
    loss, mean = pi[K], float(k @ pi)
    var = float(((k - mean) ** 2) @ pi)
    return MM1K(float(loss), float(mean), var, pi, float(mean / (rho * mu * (1 - loss))))


@dataclass(frozen=True)
class MD1:
    wait_mean: float  # Wq, mean wait before service
    queue_mean: float  # Lq, mean number waiting
    delay_mean: float  # W = Wq + 1/mu
    mean: float  # L, mean number in system


def md1(rho: float, mu: float = 1.0) -> MD1:
    """M/D/1 by Pollaczek-Khinchine: ``Wq = rho / (2 mu (1 - rho))``, ``Lq =
    rho^2 / (2 (1 - rho))``, ``W = Wq + 1/mu``, ``L = Lq + rho``. Needs
    ``rho < 1``."""
    if not (np.isfinite(rho) and 0 < rho < 1):
        raise ModelError(f"rho (offered load): M/D/1 is stable only for 0 < rho < 1, got {rho}")
    if not (np.isfinite(mu) and mu > 0):
        raise ModelError(f"mu (service rate, packets/s): need a finite number > 0, got {mu}")
    wq = rho / (2 * mu * (1 - rho))
    lq = rho * rho / (2 * (1 - rho))
    return MD1(wq, lq, wq + 1 / mu, lq + rho)


@register("mm1k", "M/M/1/K: loss and queue size (K counts the packet in service)",
          Param("rho", float, "0.5,0.9,1,2", "offered load (list or range)", many=True),
          Param("K", int, 10, "room in the system, packets"),
          Param("mu", float, 1.0, "service rate, packets/s (delays in seconds; 1 gives mean service times)"))
def _cli_mm1k(rho, K, mu):
    rows = [mm1k(float(r), K, mu=mu) for r in rho]
    return {"rho": rho, "loss": [m.loss for m in rows], "mean": [m.mean for m in rows],
            "var": [m.var for m in rows], "delay_mean": [m.delay_mean for m in rows]}


@register("md1", "M/D/1: Pollaczek-Khinchine waiting time and queue",
          Param("rho", float, "0.5,0.8,0.9", "offered load (list or range)", many=True),
          Param("mu", float, 1.0, "service rate, packets/s (delays in seconds; 1 gives mean service times)"))
def _cli_md1(rho, mu):
    rows = [md1(float(r), mu) for r in rho]
    return {"rho": rho, "wait_mean": [m.wait_mean for m in rows], "queue_mean": [m.queue_mean for m in rows],
            "delay_mean": [m.delay_mean for m in rows], "mean": [m.mean for m in rows]}
