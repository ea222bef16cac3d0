"""Markov models of Tail Drop and RED with an instantaneous queue.

T. Bonald, M. May, J.-C. Bolot, "Analytic evaluation of RED performance", IEEE
INFOCOM 2000. One queue with room for ``K`` packets *in the system* (waiting
plus the one in service), exponential service at rate ``mu``, Poisson or
batch-Poisson arrivals. Rates are in units of ``mu`` throughout (``mu = 1``),
so a load ``rho`` is an arrival rate and times come out in mean service times
unless a ``mu`` is given.

RED here is the paper's basic drop function of the queue size ``x`` an
arrival sees (no averaging, no gentle region, no count spacing)::

    d(x) = 0                                        x < min_th
    d(x) = max_p (x - min_th) / (max_th - min_th)   min_th <= x < max_th
    d(x) = 1                                        x >= max_th

and an arrival that finds the system full (``k = K``) is always dropped.

**What "the queue size an arrival sees" is.** With ``k`` packets in the
system, the paper's models evaluate ``d`` at ``k + 1`` (the arriving packet
counted, ``count_arrival=True``, the default) or at ``k``
(``count_arrival=False``). Simulators and routers measure the backlog
*behind* the packet in transmission (ns-2's ``q_->length()``, Linux's qdisc
backlog, aqmlab's queues): pass ``count_in_service=False`` to take one off
for a busy server, so ``x = max(k - 1, 0) + [count_arrival]``. An aqmlab
queue with a limit of ``L`` packets holds ``K = L + 1`` in the system, and
its drop decision is the model with ``count_arrival=False,
count_in_service=False``.

The batch chains are solved with the GTH algorithm (Grassmann, Taksar,
Heyman 1985), which has no subtractions and so keeps full relative accuracy
even for states of probability 1e-20 (Tail Drop at load 0.5 with K = 40);
birth-death chains (Poisson input) use their product form, in logs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from aqmlab.exceptions import ModelError
from aqmlab.models.registry import Param, register

__all__ = [
    "Red", "QueueSize", "RunLength", "drop_vector", "stationary", "drop_probability", "mix_drop_probability",
    "queue_distribution", "consecutive_drops_td", "consecutive_drops_red",
]


@dataclass(frozen=True)
class Red:
    """The paper's basic RED drop function d(x) (thresholds in packets)."""

    min_th: float
    max_th: float
    max_p: float

    def __post_init__(self) -> None:
        if not (0 <= self.min_th < self.max_th):
            raise ModelError(f"RED thresholds: need 0 <= min_th < max_th, got min_th {self.min_th}, "
                             f"max_th {self.max_th}")
        if not (0 < self.max_p <= 1):
            raise ModelError(f"RED max_p: need 0 < max_p <= 1, got {self.max_p}")

    def d(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        ramp = self.max_p * (x - self.min_th) / (self.max_th - self.min_th)
        return np.where(x < self.min_th, 0.0, np.where(x < self.max_th, ramp, 1.0))


MAX_K = 2000  # the chains are dense: (K+1)^2 rates and O(K^3) work


def _check_k(K: int) -> None:
    if int(K) != K or not 1 <= K <= MAX_K:
        raise ModelError(f"K (room in the system, packets): need a whole number from 1 to {MAX_K}, got {K}")


def drop_vector(K: int, red: Red | None = None, *, count_arrival: bool = True,
                count_in_service: bool = True) -> np.ndarray:
    """The probability that an arrival finding ``k = 0..K`` packets in the
    system is dropped: ``d`` at the queue size it sees (see the module
    docstring for the conventions), 1 at ``k = K``, and 0 below ``K`` for Tail
    Drop (``red=None``)."""
    _check_k(K)
    k = np.arange(K + 1)
    seen = (k if count_in_service else np.maximum(k - 1, 0)) + (1 if count_arrival else 0)
    d = red.d(seen) if red is not None else np.zeros(K + 1)
    d[K] = 1.0
    return d


def stationary(rates: np.ndarray) -> np.ndarray:
    """Stationary distribution of a continuous-time Markov chain given its
    off-diagonal transition rates (the diagonal is ignored), by GTH state
    reduction. The chain must be irreducible."""
    p = np.array(rates, dtype=float)
    n = p.shape[0]
    np.fill_diagonal(p, 0.0)
    for k in range(n - 1, 0, -1):
        out = p[k, :k].sum()
        if out <= 0:
            raise ModelError("the chain is not irreducible (a state cannot reach the lower states)")
        p[:k, k] /= out
        p[:k, :k] += np.outer(p[:k, k], p[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ p[:k, k]
    return pi / pi.sum()


def _accepted_pmf(B: int, d: np.ndarray, K: int) -> np.ndarray:
    """``a[k, j]``: probability that a batch of ``B`` arriving in state ``k``
    leaves ``j`` packets in the queue: each packet passes an independent coin
    of probability ``1 - d(k)`` (Approximation 1: ``d`` taken when the batch's
    first packet arrives), and what passes fills what room there is."""
    x = np.arange(B + 1)
    coins = binom.pmf(x[None, :], B, 1.0 - d[:, None])  # (K+1, B+1)
    a = np.zeros((K + 1, B + 1))
    for k in range(K + 1):
        room = K - k
        a[k, :min(room, B) + 1] = coins[k, :min(room, B) + 1]
        if room < B:
            a[k, room] += coins[k, room + 1:].sum()
    return a


def _chain(K: int, streams: list[tuple[float, int]], d: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Stationary distribution of the queue fed by independent batch-Poisson
    ``streams`` of (batch rate, batch size), and each stream's expected
    number of packets dropped per batch in each state."""
    rates = np.zeros((K + 1, K + 1))
    rates[np.arange(1, K + 1), np.arange(K)] = 1.0  # services, mu = 1
    drops = []
    for rate, B in streams:
        a = _accepted_pmf(B, d, K)
        for j in range(1, min(B, K) + 1):  # a batch adds at most the room there is
            rates[np.arange(K + 1 - j), np.arange(j, K + 1)] += rate * a[:K + 1 - j, j]
        drops.append(B - a @ np.arange(B + 1))
    return stationary(rates), drops


def _check_load(name: str, rho: float) -> None:
    if not (np.isfinite(rho) and rho > 0):
        raise ModelError(f"{name} (offered load): need a finite number > 0, got {rho}")


def _check_batch(B: int) -> None:
    if int(B) != B or B < 1:
        raise ModelError(f"B (batch size, packets): need a whole number >= 1, got {B}")


def drop_probability(rho: float | np.ndarray, K: int, B: int = 1, red: Red | None = None, *,
                     count_arrival: bool = True, count_in_service: bool = True) -> np.ndarray | float:
    """Packet drop probability of batch-Poisson input:
    batches of ``B`` packets at rate ``rho / B`` (load ``rho``), Tail Drop
    (``red=None``) or RED with the instantaneous queue.

    Tail Drop: ``P_TD = sum_j pi(K - j) (B - j) / B``. RED: each packet of a
    batch dropped with ``d(k)`` (Approximation 1), so ``P_RED = sum_k pi(k)
    d(k)`` -- plus, for ``B > 1``, the packets that pass the coin but find no
    room, which the chain counts exactly (so RED with ``min_th >= K`` gives
    exactly ``P_TD``). ``B = 1`` is M/M/1/K with drops: at ``min_th >= K``
    the loss ``rho^K (1 - rho) / (1 - rho^(K+1))``. Vectorised over ``rho``.
    """
    _check_batch(B)
    d = drop_vector(K, red, count_arrival=count_arrival, count_in_service=count_in_service)
    out = []
    for r in np.atleast_1d(np.asarray(rho, dtype=float)):
        _check_load("rho", r)
        pi, (drops,) = _chain(K, [(r / B, B)], d)
        out.append(pi @ drops / B)
    return out[0] if np.ndim(rho) == 0 else np.array(out)


def mix_drop_probability(rho: float | np.ndarray, bursty_fraction: float | np.ndarray, K: int, B: int,
                         red: Red | None = None, *, count_arrival: bool = True,
                         count_in_service: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per-stream drop probabilities of a bursty stream (batches of ``B``,
    load ``rho * bursty_fraction``) and a Poisson stream (the rest of
    ``rho``) into one queue: ``(P(b), P(s))``.

    Tail Drop: ``P(b)`` as :func:`drop_probability`, ``P(s) = pi(K)``. RED:
    both ``sum pi(k) d(k)``, the bursty one plus its overflow (see
    :func:`drop_probability`). ``rho`` and ``bursty_fraction`` broadcast
    against each other.
    """
    _check_batch(B)
    d = drop_vector(K, red, count_arrival=count_arrival, count_in_service=count_in_service)
    r, f = np.broadcast_arrays(np.asarray(rho, dtype=float), np.asarray(bursty_fraction, dtype=float))
    pb, ps = np.full(r.shape, np.nan), np.empty(r.shape)
    for i in np.ndindex(r.shape):
        _check_load("rho", r[i])
        if not (0 <= f[i] <= 1):
            raise ModelError(f"bursty_fraction: need a number in [0, 1], got {f[i]}")
        rho_b, rho_s = r[i] * f[i], r[i] * (1 - f[i])
        streams = [(rho_b / B, B), (rho_s, 1)]
        pi, (drops_b, drops_s) = _chain(K, streams, d)
        if f[i] > 0:  # a stream that sends nothing has no drop probability
            pb[i] = pi @ drops_b / B
        ps[i] = pi @ drops_s
    return (pb, ps) if r.ndim else (float(pb), float(ps))


@dataclass(frozen=True)
class QueueSize:
    """The number in the system ``k = 0..K`` in steady state."""

    k: np.ndarray
    distribution: np.ndarray
    mean: float
    var: float
    loss: float
    delay_mean: float  # sojourn of an accepted packet (Little's law), in 1/mu
    wait_mean: float  # its wait before service, in 1/mu


def queue_distribution(rho: float, K: int, red: Red | None = None, *, mu: float = 1.0, count_arrival: bool = True,
                       count_in_service: bool = True) -> QueueSize:
    """Queue-size distribution with Poisson input.

    Tail Drop: the truncated geometric ``pi(k) = rho^k (1 - rho) / (1 -
    rho^(K+1))`` (uniform when ``rho = 1``). RED: the birth-death chain
    ``pi(k) ~ rho^k prod_{l<k} (1 - d(l))`` with ``d`` the drop probability of
    an arrival finding ``l`` (:func:`drop_vector`, so the conventions shift
    it by one). Delays follow by Little's law with the accepted rate ``rho mu
    (1 - loss)``, in seconds when ``mu`` (packets/s) is given.
    """
    _check_load("rho", rho)
    _check_k(K)
    if not (np.isfinite(mu) and mu > 0):
        raise ModelError(f"mu (service rate, packets/s): need a finite number > 0, got {mu}")
    k = np.arange(K + 1)
    d = drop_vector(K, red, count_arrival=count_arrival, count_in_service=count_in_service)
    if d[0] >= 1:
        raise ModelError("every arrival is dropped (d = 1 at an empty queue): the queue never holds a packet")
    # pi(k) ~ rho^k prod_{l<k} (1 - d(l)) (for Tail Drop the truncated
    # geometric), in logs and normalised by its largest term, so it stays
    # finite for any rho and K.
    with np.errstate(divide="ignore"):
        logw = k * np.log(rho) + np.concatenate([[0.0], np.cumsum(np.log1p(-d[:-1]))])
    w = np.exp(logw - logw.max())
    pi = w / w.sum()
    mean = float(k @ pi)
    var = float(((k - mean) ** 2) @ pi)
    loss = float(pi @ d)
    accepted = rho * mu * (1 - loss)
    busy = 1 - pi[0]
    return QueueSize(k, pi, mean, var, loss, mean / accepted, (mean - busy) / accepted)


@dataclass(frozen=True)
class RunLength:
    """Distribution of the number ``N`` of consecutive drops (a loss run)."""

    n: np.ndarray  # 1, 2, ... up to where P(N > n) < 1e-15 (or n_max)
    distribution: np.ndarray  # P(N = n)
    mean: float
    var: float


_TAIL = 1e-15
_MAX_TERMS = 10_000_000


def _from_survival(survival: list[float] | np.ndarray) -> RunLength:
    """Mean and variance from P(N > n), n = 0, 1, ...: E[N] = sum P(N > n),
    E[N^2] = sum (2n + 1) P(N > n)."""
    s = np.asarray(survival, dtype=float)
    n = np.arange(len(s))
    mean = float(s.sum())
    second = float(((2 * n + 1) * s).sum())
    pmf = s[:-1] - s[1:]
    return RunLength(np.arange(1, len(s)), pmf, mean, second - mean * mean)


def consecutive_drops_td(rho: float) -> RunLength:
    """Tail Drop with Poisson input: after a drop the queue
    is full and the next event is an arrival (dropped) with probability ``p =
    rho / (rho + 1)``, so ``P(N > n) = p^n``: mean ``rho + 1``, variance
    ``rho (rho + 1)`` (geometric), given in closed form; the distribution is
    cut where ``P(N > n) < 1e-15``."""
    _check_load("rho", rho)
    p = rho / (rho + 1)
    terms = int(np.ceil(np.log(_TAIL) / np.log(p))) + 1
    if terms > _MAX_TERMS:
        raise ModelError(f"rho {rho}: loss runs too long to tabulate (over {_MAX_TERMS} terms)")
    survival = p ** np.arange(terms)
    run = _from_survival(survival)
    return RunLength(run.n, run.distribution, rho + 1, rho * (rho + 1))


def consecutive_drops_red(rho: float, K: int, red: Red | None, *, method: str = "approx2",
                          count_arrival: bool = True, count_in_service: bool = True) -> RunLength:
    """Consecutive drops of RED with the instantaneous queue, Poisson input;
    mean and variance are summed from the distribution.

    ``method="approx2"``: the paper's Approximation 2 (its eq. 4), every
    packet of a run dropped with the ``d(k)`` of the state where it began::

        P(N > n) = sum_{k<K} pi(k) d(k)^(n+1) / sum_{k<K} pi(k) d(k)

    It needs ``d(k) < 1`` for ``k < K`` (else its runs never end): with
    ``max_th = K`` that means ``count_arrival=False``.

    ``method="exact"``: the run as the Markov chain makes it. The state seen
    by a run's first drop follows from an accepted arrival's state; between
    two arrivals the queue loses ``j`` packets with probability ``(1 /
    (1 + rho))^j rho / (1 + rho)`` (to 0 with what is left); each arrival of
    the run is dropped with the ``d`` of the state it finds. So ``P(N > n) =
    a M^n 1``, with ``M[k, k'] = P(next arrival finds k' | k) d(k')``. This
    is exact for Poisson input and exponential service, Tail Drop included
    (``red=None`` gives the geometric law).
    """
    _check_load("rho", rho)
    d = drop_vector(K, red, count_arrival=count_arrival, count_in_service=count_in_service)
    pi = queue_distribution(rho, K, red, count_arrival=count_arrival, count_in_service=count_in_service).distribution
    if method == "approx2":
        if red is None:
            raise ModelError("method approx2 is RED's approximation; Tail Drop has the closed form "
                             "consecutive_drops_td (or method exact)")
        w, dk = pi[:-1] * d[:-1], d[:-1]
        if not w.sum() > 0:
            raise ModelError(f"no drops below K at rho {rho}: Approximation 2 has nothing to sum")
        if (dk[w > 0] >= 1).any():
            raise ModelError("Approximation 2 needs d(k) < 1 for every k < K (runs from such a state never end); "
                             f"d reaches 1 at k = {int(np.argmax(dk >= 1))} < K = {K}: use count_arrival=False "
                             "or method='exact'")
        top = dk[w > 0].max()
        terms = int(np.ceil(np.log(_TAIL) / np.log(top))) + 1 if top > 0 else 2
        if terms > _MAX_TERMS:
            raise ModelError(f"d(k) = {top} makes runs too long to tabulate (over {_MAX_TERMS} terms)")
        n = np.arange(terms)
        survival = (w[None, :] * dk[None, :] ** n[:, None]).sum(axis=1) / w.sum()
        return _from_survival(survival)
    if method != "exact":
        raise ModelError(f"method: need 'approx2' or 'exact', got {method!r}")
    down = 1.0 / (1.0 + rho)  # a departure comes before the next arrival
    nxt = np.zeros((K + 1, K + 1))  # nxt[k, k']: next arrival finds k' after one left in k
    for k in range(K + 1):
        j = np.arange(k)
        nxt[k, k - j] = down ** j * (1 - down)
        nxt[k, 0] += down ** k
    # A run begins where an accepted arrival (state k -> k + 1) is followed
    # by a dropped one.
    after_accept = np.zeros(K + 1)
    after_accept[1:] = pi[:-1] * (1 - d[:-1])
    start = (after_accept @ nxt) * d
    if not start.sum() > 0:
        raise ModelError(f"no drops at rho {rho}: there is no run length to describe")
    a = start / start.sum()
    m = nxt * d[None, :]
    survival = [1.0]  # P(N > 0)
    while survival[-1] > _TAIL:
        if len(survival) > _MAX_TERMS:
            raise ModelError(f"loss runs too long to tabulate (over {_MAX_TERMS} terms)")
        a = a @ m
        survival.append(float(a.sum()))  # P(N > n) = a M^n 1
    return _from_survival(survival)


# --- the command line -------------------------------------------------------

_QDISC = Param("qdisc", str, "td", "td (Tail Drop) or red (instantaneous queue)", choices=("td", "red"))
_K = Param("K", int, 40, "room in the system, packets (waiting plus in service)")
_RED = (
    Param("min_th", float, 20.0, "RED min_th, packets"),
    Param("max_th", float, 40.0, "RED max_th, packets"),
    Param("max_p", float, 1.0, "RED max_p"),
)
_CONV = (
    Param("count_arrival", bool, True, "d at the size with the arriving packet counted (k + 1)"),
    Param("count_in_service", bool, True, "count the packet in service (ns-2, Linux and aqmlab queues do not)"),
)


def _red(qdisc: str, min_th: float, max_th: float, max_p: float) -> Red | None:
    return Red(min_th, max_th, max_p) if qdisc == "red" else None


@register("bonald-drop", "drop probability of batch-Poisson input, Tail Drop or RED (Bonald et al. 1.1)",
          Param("rho", float, "0.5:3:0.25", "offered load (list or range)", many=True),
          Param("B", int, 1, "batch size, packets"), _K, _QDISC, *_RED, *_CONV)
def _cli_drop(rho, B, K, qdisc, min_th, max_th, max_p, count_arrival, count_in_service):
    loss = drop_probability(rho, K, B, _red(qdisc, min_th, max_th, max_p), count_arrival=count_arrival,
                            count_in_service=count_in_service)
    return {"rho": rho, "loss": loss}


@register("bonald-mix", "per-stream drop probabilities of a bursty plus Poisson mix (Bonald et al. 1.2)",
          Param("rho", float, "2", "total offered load (list or range)", many=True),
          Param("fraction", float, "0:1:0.1", "bursty fraction rho_b / rho (list or range)", many=True),
          Param("B", int, 3, "batch size of the bursty stream, packets"), _K, _QDISC,
          Param("min_th", float, 10.0, "RED min_th, packets"), Param("max_th", float, 30.0, "RED max_th, packets"),
          Param("max_p", float, 0.1, "RED max_p"), *_CONV)
def _cli_mix(rho, fraction, B, K, qdisc, min_th, max_th, max_p, count_arrival, count_in_service):
    r, f = (np.repeat(rho, len(fraction)), np.tile(fraction, len(rho)))
    pb, ps = mix_drop_probability(r, f, K, B, _red(qdisc, min_th, max_th, max_p), count_arrival=count_arrival,
                                  count_in_service=count_in_service)
    return {"rho": r, "fraction": f, "loss_b": pb, "loss_s": ps}


@register("bonald-consecutive", "distribution of consecutive drops with Poisson input (Bonald et al. 1.3)",
          Param("rho", float, 2.0, "offered load"), _K, _QDISC, *_RED,
          Param("method", str, "exact", "RED: approx2 (the paper's eq. 4) or exact (the chain)",
                choices=("approx2", "exact")),
          Param("n_max", int, 15, "rows of the printed distribution"), *_CONV)
def _cli_consecutive(rho, K, qdisc, min_th, max_th, max_p, method, n_max, count_arrival, count_in_service):
    if n_max < 1:
        raise ModelError(f"--n_max: need a whole number >= 1, got {n_max}")
    if qdisc == "td":
        run = consecutive_drops_td(rho)
    else:
        run = consecutive_drops_red(rho, K, _red(qdisc, min_th, max_th, max_p), method=method,
                                    count_arrival=count_arrival, count_in_service=count_in_service)
    return {"mean": run.mean, "var": run.var, "n": run.n[:n_max], "distribution": run.distribution[:n_max]}


@register("bonald-queue", "queue-size distribution with Poisson input (Bonald et al. 1.4)",
          Param("rho", float, 2.0, "offered load"), _K, _QDISC, *_RED,
          Param("mu", float, 1.0, "service rate, packets/s (delays in seconds; 1 gives mean service times)"),
          *_CONV)
def _cli_queue(rho, K, qdisc, min_th, max_th, max_p, mu, count_arrival, count_in_service):
    q = queue_distribution(rho, K, _red(qdisc, min_th, max_th, max_p), mu=mu, count_arrival=count_arrival,
                           count_in_service=count_in_service)
    return {"mean": q.mean, "var": q.var, "loss": q.loss, "delay_mean": q.delay_mean, "wait_mean": q.wait_mean,
            "k": q.k, "distribution": q.distribution}
