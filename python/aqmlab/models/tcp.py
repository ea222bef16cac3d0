"""Steady-state throughput of a bulk TCP flow as a function of its loss
probability ``p`` and round-trip time.

- Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the TCP
  congestion avoidance algorithm", ACM CCR 27(3), 1997: ``B = (MSS / RTT) C /
  sqrt(p)``. ``C = sqrt(3 / (2b))`` for periodic loss with an ACK every ``b``
  packets: sqrt(3/2) without delayed ACKs, sqrt(3/4) with them; ``C = 1`` is
  the usual upper-bound form. No timeouts, so it overestimates at p above a
  few per cent.
- Padhye, Firoiu, Towsley, Kurose, "Modeling TCP throughput: a simple model
  and its empirical validation", SIGCOMM 1998: the full model (with
  timeouts, ``T0`` the base RTO, and the receiver window ``W_max``; eqs. 13,
  28 and 31) and the approximate one
  (eq. 33), both in packets per second. ``p`` is the probability that a
  packet is the first loss of its round, closer to a loss-event rate than to
  a raw drop rate.

Every function is vectorised over numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aqmlab.exceptions import ModelError
from aqmlab.models.registry import Param, register

__all__ = ["mathis", "Padhye", "padhye"]


def _check(p: np.ndarray, rtt: np.ndarray) -> None:
    if not np.all((p > 0) & (p < 1)):
        raise ModelError(f"p (loss probability): need 0 < p < 1, got {p}")
    if not np.all(np.isfinite(rtt) & (rtt > 0)):
        raise ModelError(f"rtt (round-trip time, s): need a finite number > 0, got {rtt}")


def mathis(p: float | np.ndarray, rtt: float | np.ndarray, *, b: int = 1,
           constant: float | None = None) -> np.ndarray | float:
    """Packets per second by Mathis et al.: ``C / (RTT sqrt(p))``, with ``C =
    sqrt(3 / (2b))`` unless ``constant`` is given. Multiply by the MSS for
    bytes per second."""
    p, rtt = np.asarray(p, dtype=float), np.asarray(rtt, dtype=float)
    _check(p, rtt)
    if b < 1:
        raise ModelError(f"b (packets acknowledged per ACK): need >= 1, got {b}")
    c = np.sqrt(3 / (2 * b)) if constant is None else constant
    if not c > 0:
        raise ModelError(f"constant: need a number > 0, got {constant}")
    out = c / (rtt * np.sqrt(p))
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class Padhye:
    rate_pps: np.ndarray | float  # the full model (eq. 31)
    rate_approx_pps: np.ndarray | float  # the approximate model (eq. 33), capped at W_max / RTT
    E_W: np.ndarray | float  # unconstrained mean window at loss indications (eq. 13)
    Q: np.ndarray | float  # probability that a loss indication is a timeout, Q(min(E[W], W_max))
    window_limited: np.ndarray | bool  # E[W] >= W_max: the second branch of eq. 31


def padhye(p: float | np.ndarray, rtt: float | np.ndarray, T0: float | np.ndarray, *, b: int = 1,
           W_max: float = np.inf) -> Padhye:
    """Padhye et al.'s full and approximate models, packets per second::

        E[W] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2)
        Q(w) = min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w))
        f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6
        E[W] < W_max:  B = ((1-p)/p + E[W] + Q(E[W])/(1-p))
                           / (RTT (b E[W]/2 + 1) + Q(E[W]) T0 f(p)/(1-p))
        otherwise:     B = ((1-p)/p + W_max + Q(W_max)/(1-p))
                           / (RTT (b W_max/8 + (1-p)/(p W_max) + 2) + Q(W_max) T0 f(p)/(1-p))
        approx:        B = min(W_max/RTT, 1/(RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32p^2)))
    """
    p, rtt, T0 = (np.asarray(x, dtype=float) for x in (p, rtt, T0))
    _check(p, rtt)
    if not np.all(np.isfinite(T0) & (T0 > 0)):
        raise ModelError(f"T0 (base retransmission timeout, s): need a finite number > 0, got {T0}")
    if b < 1:
        raise ModelError(f"b (packets acknowledged per ACK): need >= 1, got {b}")
    if not W_max >= 1:
        raise ModelError(f"W_max (receiver window, packets): need >= 1 (or inf), got {W_max}")
    q = 1 - p
    a = (2 + b) / (3 * b)
    ew = a + np.sqrt(8 * q / (3 * b * p) + a * a)

    def timeout_share(w: np.ndarray) -> np.ndarray:
        return np.minimum(1.0, (1 - q**3) * (1 + q**3 * (1 - q ** (w - 3))) / (1 - q**w))

    f = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    limited = ew >= W_max
    w = np.where(limited, W_max, ew)
    qw = timeout_share(w)
    top = q / p + w + qw / q
    with np.errstate(invalid="ignore"):  # the unused branch may be inf - inf
        bottom = np.where(limited, rtt * (b * w / 8 + q / (p * w) + 2), rtt * (b * w / 2 + 1)) + qw * T0 * f / q
    full = top / bottom
    approx = np.minimum(W_max / rtt,
                        1 / (rtt * np.sqrt(2 * b * p / 3) + T0 * np.minimum(1, 3 * np.sqrt(3 * b * p / 8)) * p
                             * (1 + 32 * p**2)))
    scalar = full.ndim == 0
    pick = (lambda x: float(x)) if scalar else (lambda x: x)
    return Padhye(pick(full), pick(approx), pick(ew), pick(qw), bool(limited) if scalar else limited)


_P = Param("p", float, "0.001,0.005,0.01,0.02,0.05", "loss probability (list or range)", many=True)
_RTT = Param("rtt", float, 0.1, "round-trip time, s", unit="s")
_MSS = Param("mss", float, 1460.0, "segment size, bytes (for the byte rates)", unit="B")


@register("mathis", "TCP throughput by Mathis et al. (periodic loss, no timeouts)", _P, _RTT, _MSS,
          Param("b", int, 1, "packets acknowledged per ACK: C = sqrt(3/(2b))"),
          Param("constant", float, None, "the constant C itself (overrides b)"))
def _cli_mathis(p, rtt, mss, b, constant):
    rate = mathis(p, rtt, b=b, constant=constant)
    return {"p": p, "rate_pps": rate, "rate_Bps": rate * mss, "rate_bps": 8 * rate * mss}


@register("padhye", "TCP throughput by Padhye et al. (full and approximate, with timeouts)", _P, _RTT,
          Param("T0", float, 1.0, "base retransmission timeout, s", unit="s"),
          Param("b", int, 1, "packets acknowledged per ACK"),
          Param("W_max", float, float("inf"), "receiver window, packets"), _MSS)
def _cli_padhye(p, rtt, T0, b, W_max, mss):
    m = padhye(p, rtt, T0, b=b, W_max=W_max)
    return {"p": p, "rate_pps": m.rate_pps, "rate_approx_pps": m.rate_approx_pps, "rate_bps": 8 * m.rate_pps * mss,
            "E_W": m.E_W, "Q": m.Q}
