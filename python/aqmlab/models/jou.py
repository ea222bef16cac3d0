"""Queue dynamics of N persistent TCP flows through a queue whose drop
probability is held fixed (Adaptive RED with dynamic thresholds), as a
one-dimensional map sampled every S seconds.

Source: Jia-Shiang Jou, Xiaobo Tan and John S. Baras, "A Parallel Queue
Structure for Active Queue Management", Proc. 38th Conference on
Information Sciences and Systems (CISS), Princeton, 2004: the analysis of
the queue length under the dynamic-threshold Adaptive RED. Study C4
(``aqmlab.studies.parallel_queue``) holds the numbers it is used with.

The model. With the drop probability fixed, flow k keeps a constant mean
window ``W_bar`` (bits) and sends ``W_bar`` per round trip, the round trip
being ``d_k + q/C`` (``d_k`` the flow's fixed delay in seconds, reverse path
included; ``q`` the queue in bits; ``C`` the link rate in bits/s). Over an
interval of ``S`` seconds the queue grows by the arrivals minus the service::

    f(q)   = q + S * ( sum_k W_bar*C / (q + d_k*C) - C )                 (1)
    q[n+1] = min(B, max(0, f(q[n]) + xi[n])),  xi[n] ~ N(0, N*S^2*sigma^2)  (2)

``sigma`` (bits/s) is the standard deviation of one flow's rate about its
mean, independent between flows and intervals, so the N flows add
``N*S^2*sigma^2`` bits^2 of variance per interval. ``B`` is the buffer in bits.

    equilibrium      q_e >= 0 with sum_k W_bar/(d_k + q_e/C) = C         (3)
    slope            f'(q) = 1 - S*W_bar*C * sum_k (q + d_k*C)^-2          (4)

What this module does not do: the Adaptive RED controller itself (the
window is an input, not derived from the drop probability), slow start,
timeouts, or the parallel drop-tail queue; those are the simulator's job.

Flows are passed as ``d``, a 1-D array of per-flow delays in seconds, so
``N = len(d)``; :func:`delays` builds the homogeneous ``d`` for N flows with
the same delay. A scalar ``d`` is refused rather than guessed at.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq
from scipy.special import ndtr

from aqmlab.exceptions import ModelError
from aqmlab.models.registry import Param, Quantities, register

FloatArray = npt.NDArray[np.float64]

# A dense transition matrix of this many states is 800 MB; beyond it the
# caller should choose a larger packet size L.
MAX_STATES = 10_000


# Validation


def _positive(name: str, value: float, unit: str) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ModelError(f"{name} must be a positive, finite number of {unit}, got {value!r}")
    return v


def _non_negative(name: str, value: float, unit: str) -> float:
    v = float(value)
    if not (math.isfinite(v) and v >= 0):
        raise ModelError(f"{name} must be a non-negative, finite number of {unit}, got {value!r}")
    return v


def _flow_delays(d: npt.ArrayLike) -> FloatArray:
    """``d`` as a validated 1-D float array of per-flow delays (seconds)."""
    arr = np.asarray(d, dtype=np.float64)
    if arr.ndim != 1:
        raise ModelError(
            f"d must be a 1-D sequence of per-flow delays in seconds (one per flow), got {d!r}; "
            "for N flows with the same delay pass delays(N, d)"
        )
    if arr.size == 0:
        raise ModelError("d must hold at least one flow's delay, got an empty sequence")
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise ModelError(f"every d_k must be a positive, finite number of seconds, got {arr.tolist()!r}")
    return arr


def _is_homogeneous(d: FloatArray) -> bool:
    return bool(np.all(d == d[0]))


def _describe_d(d: FloatArray) -> str:
    if _is_homogeneous(d):
        return f"N = {d.size} flows with d = {d[0]:.6g} s"
    return f"N = {d.size} flows with d_k from {d.min():.6g} to {d.max():.6g} s"


# The map


def delays(N: int, d: float) -> FloatArray:
    """Per-flow delays of ``N`` flows that all have delay ``d`` (seconds):
    the ``d`` argument of every function here for the homogeneous case."""
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise ModelError(f"N must be a positive whole number of flows, got {N!r}")
    return np.full(int(N), _positive("d", d, "seconds"))


def _drift(q: FloatArray, S: float, W_bar: float, C: float, dC: FloatArray) -> FloatArray:
    # Equation (1), without validation: the inner loop of trajectory().
    rate: FloatArray = np.sum(W_bar * C / (q[..., np.newaxis] + dC), axis=-1)
    return q + S * (rate - C)


def _map_args(q: Any, S: float, W_bar: float, C: float, d: npt.ArrayLike) -> tuple[float, float, float, FloatArray,
                                                                                 FloatArray]:
    """The map's arguments checked, with the delays and queue as arrays."""
    qa = np.asarray(q, dtype=np.float64)
    if not np.all(np.isfinite(qa) & (qa >= 0)):
        raise ModelError(f"q must be a non-negative, finite number of bits, got {q!r}")
    return (_positive("S", S, "seconds"), _positive("W_bar", W_bar, "bits"), _positive("C", C, "bits/s"),
            _flow_delays(d), qa)


@overload
def drift_map(q: float, *, S: float, W_bar: float, C: float, d: npt.ArrayLike) -> float: ...
@overload
def drift_map(q: npt.NDArray[Any], *, S: float, W_bar: float, C: float, d: npt.ArrayLike) -> FloatArray: ...
def drift_map(q: float | npt.NDArray[Any], *, S: float, W_bar: float, C: float, d: npt.ArrayLike) -> float | FloatArray:
    """Equation (1): ``f(q) = q + S * (sum_k W_bar*C/(q + d_k*C) - C)``, the
    queue (bits) S seconds after it was ``q`` bits, before noise and before
    clipping to ``[0, B]``.

    ``q`` is a queue in bits (>= 0), a scalar or an array (evaluated
    elementwise); ``S`` the sampling interval in seconds; ``W_bar`` each
    flow's mean window in bits; ``C`` the link rate in bits/s; ``d`` the
    per-flow delays in seconds (see :func:`delays`)."""
    S, W_bar, C, dk, qa = _map_args(q, S, W_bar, C, d)
    out = _drift(qa, S, W_bar, C, dk * C)
    return float(out) if qa.ndim == 0 else out


@overload
def drift_map_prime(q: float, *, S: float, W_bar: float, C: float, d: npt.ArrayLike) -> float: ...
@overload
def drift_map_prime(q: npt.NDArray[Any], *, S: float, W_bar: float, C: float, d: npt.ArrayLike) -> FloatArray: ...
def drift_map_prime(q: float | npt.NDArray[Any], *, S: float, W_bar: float, C: float, d: npt.ArrayLike) -> float | FloatArray:
    """Equation (4): ``f'(q) = 1 - S*W_bar*C * sum_k (q + d_k*C)^-2``, the
    slope of the map (dimensionless); arguments and units as :func:`drift_map`.

    The slope is below 1 everywhere and increases with q, so on ``q >= 0`` it
    is smallest at ``q = 0``, where it is ``1 - S*W_bar/C * sum_k d_k^-2``;
    that is where the global-stability bound of :func:`stability` comes from."""
    S, W_bar, C, dk, qa = _map_args(q, S, W_bar, C, d)
    out = 1.0 - S * W_bar * C * np.sum((qa[..., np.newaxis] + dk * C) ** -2.0, axis=-1)
    return float(out) if qa.ndim == 0 else out


# Equilibrium and stability


def equilibrium(*, W_bar: float, C: float, d: npt.ArrayLike) -> float:
    """Equation (3): the queue ``q_e`` (bits) at which the flows' total rate
    ``sum_k W_bar/(d_k + q_e/C)`` equals the link rate ``C`` (bits/s); it is
    the fixed point of (1) for every S.

    Homogeneous ``d`` (all ``d_k`` equal): the closed form
    ``q_e = N*W_bar - d*C``. Otherwise the total rate decreases strictly in
    q, so the root is unique and is found by Brent's method on
    ``[0, N*W_bar]`` (at ``q = N*W_bar`` every flow's rate is below C/N).

    Peak-rate condition: an equilibrium with ``q_e >= 0`` exists only if
    the flows fill the link with an empty queue, ``sum_k W_bar/d_k >= C``;
    otherwise :class:`~aqmlab.exceptions.ModelError` names the values. At
    exact equality the link is just filled by an empty queue and
    ``q_e = 0.0`` is returned (the condition is ``>=``); the clipped
    map then has 0 as its fixed point as well.
    """
    W_bar = _positive("W_bar", W_bar, "bits")
    C = _positive("C", C, "bits/s")
    dk = _flow_delays(d)
    N = dk.size
    peak = float(np.sum(W_bar / dk))
    if peak < C:
        raise ModelError(
            f"peak-rate condition sum_k W_bar/d_k >= C does not hold: sum_k W_bar/d_k = {peak:.6g} bits/s "
            f"< C = {C:.6g} bits/s (W_bar = {W_bar:.6g} bits, {_describe_d(dk)}); the flows cannot fill "
            "the link even with an empty queue, so there is no equilibrium q_e >= 0"
        )
    if _is_homogeneous(dk):
        # Rounding can leave N*W_bar - d*C a few ulps below 0 at the boundary.
        return max(0.0, N * W_bar - float(dk[0]) * C)
    if peak == C:
        return 0.0

    def excess_rate(q: float) -> float:
        return float(np.sum(W_bar / (dk + q / C))) - C

    return float(brentq(excess_rate, 0.0, N * W_bar, xtol=1e-12, rtol=4 * np.finfo(float).eps, maxiter=200))


@dataclass(frozen=True)
class Stability:
    """Stability of the fixed point ``q_e`` of (1) for one sampling interval S.

    ``f_prime``: the slope (4) at ``q_e``. ``s_gas_bound`` (seconds): S below
    it is sufficient for global asymptotic stability; ``gas`` says whether
    ``S < s_gas_bound``. ``s_monotone_bound`` (seconds): the largest S with
    ``f'(q_e) >= 0`` (no overshoot near ``q_e``); ``monotone`` says whether
    ``f'(q_e) >= 0``. ``s_monotone_paper_bound`` (seconds): the paper's
    closed-form bound, see :func:`stability`."""

    q_e: float
    f_prime: float
    s_gas_bound: float
    gas: bool
    s_monotone_bound: float
    monotone: bool
    s_monotone_paper_bound: float


def stability(*, S: float, W_bar: float, C: float, d: npt.ArrayLike) -> Stability:
    """Stability conditions of the map (1) at ``q_e`` (3), for sampling
    interval ``S`` (seconds); other arguments as :func:`drift_map`.

    Global asymptotic stability, sufficient condition::

        S < s_gas_bound = 2*C / (W_bar * sum_k d_k^-2)

    By (4), ``f' < 1`` everywhere and ``f'`` is smallest at ``q = 0``, where
    it equals ``1 - S*W_bar/C * sum_k d_k^-2``; the bound makes ``|f'| < 1``
    on all of ``q >= 0``, so every step brings q strictly closer to ``q_e``.

    Monotone approach, ``f'(q_e) >= 0``. With ``x_k = q_e + d_k*C``, (4)
    gives ``f'(q_e) = 1 - S/S*`` where ``S* = 1/(W_bar*C * sum_k x_k^-2)``,
    so ``f'(q_e) >= 0`` exactly when ``S <= S*``; ``s_monotone_bound`` is
    this exact ``S*``. Homogeneous: ``x_k = N*W_bar`` and
    ``S* = N*W_bar/C = d + q_e/C``, the round-trip time at equilibrium (used
    in closed form, so that ``S = N*W_bar/C`` gives ``f'(q_e) = 0`` exactly).

    The heterogeneous closed form given for this bound,
    ``(C/W_bar - N(N-1)/(q_e + C*min_k d_k)^2)^-1``, cannot be right: its two
    terms have units 1/s and 1/bits^2, and for equal delays it does not
    reduce to ``N*W_bar/C``. It is the bound that follows from (3), which
    says ``sum_k 1/x_k = 1/W_bar``: then
    ``sum_k x_k^-2 = W_bar^-2 - sum_{j != k} 1/(x_j*x_k)`` and each of the
    ``N(N-1)`` cross terms is at most ``1/x_min^2`` with
    ``x_min = q_e + C*min_k d_k``, which gives, with the factor ``W_bar*C``
    the formula as given lost::

        s_monotone_paper_bound = (C/W_bar - W_bar*C*N(N-1)/(q_e + C*min_k d_k)^2)^-1

    This equals ``N*W_bar/C`` for equal delays and is at least ``S*``
    otherwise, so it is a necessary condition for ``f'(q_e) >= 0`` (S above
    it guarantees overshoot), not a sufficient one; when its denominator is
    not positive the bound is ``inf`` (it says nothing). ``monotone`` is
    decided on the exact ``S*``.
    """
    S = _positive("S", S, "seconds")
    W_bar = _positive("W_bar", W_bar, "bits")
    C = _positive("C", C, "bits/s")
    dk = _flow_delays(d)
    N = dk.size
    q_e = equilibrium(W_bar=W_bar, C=C, d=dk)

    s_gas = 2.0 * C / (W_bar * float(np.sum(dk**-2.0)))
    if _is_homogeneous(dk):
        s_mono = N * W_bar / C
    else:
        s_mono = 1.0 / (W_bar * C * float(np.sum((q_e + dk * C) ** -2.0)))
    f_prime = 1.0 - S / s_mono

    denominator = C / W_bar - W_bar * C * N * (N - 1) / (q_e + C * float(dk.min())) ** 2
    s_paper = 1.0 / denominator if denominator > 0 else math.inf

    return Stability(
        q_e=q_e,
        f_prime=f_prime,
        s_gas_bound=s_gas,
        gas=S < s_gas,
        s_monotone_bound=s_mono,
        monotone=f_prime >= 0,
        s_monotone_paper_bound=s_paper,
    )


# Sample paths


def trajectory(
    *,
    S: float,
    W_bar: float,
    C: float,
    d: npt.ArrayLike,
    B: float,
    q0: float,
    steps: int,
    sigma: float = 0.0,
    seed: int | None = None,
) -> FloatArray:
    """Equation (2) iterated: ``q[0..steps]`` in bits, ``q[0] = q0``,
    ``q[n+1] = min(B, max(0, f(q[n]) + xi[n]))`` with ``xi[n]`` i.i.d.
    ``N(0, N*S^2*sigma^2)`` drawn from ``numpy.random.default_rng(seed)``.

    ``B`` is the buffer in bits, ``q0`` the initial queue in bits
    (``0 <= q0 <= B``), ``sigma`` each flow's rate noise in bits/s; with
    ``sigma = 0`` the path is deterministic and no generator is made. Other
    arguments as :func:`drift_map`."""
    S = _positive("S", S, "seconds")
    W_bar = _positive("W_bar", W_bar, "bits")
    C = _positive("C", C, "bits/s")
    dk = _flow_delays(d)
    B = _positive("B", B, "bits")
    q0 = _non_negative("q0", q0, "bits")
    if q0 > B:
        raise ModelError(f"q0 must be at most the buffer B = {B:.6g} bits, got {q0:.6g}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ModelError(f"steps must be a non-negative whole number, got {steps!r}")
    sigma = _non_negative("sigma", sigma, "bits/s")

    steps = int(steps)
    if sigma > 0:
        xi = np.random.default_rng(seed).normal(0.0, math.sqrt(dk.size) * S * sigma, size=steps)
    else:
        xi = np.zeros(steps)
    dC = dk * C
    WC = W_bar * C
    q = np.empty(steps + 1)
    q[0] = q0
    x = float(q0)
    for n in range(steps):
        # Equation (1) as _drift computes it, on a scalar (the same
        # operations in the same order, so the same bits, at a third of the cost).
        x = min(B, max(0.0, x + S * (float(np.sum(WC / (x + dC))) - C) + float(xi[n])))
        q[n + 1] = x
    return q


def lyapunov_exponent(*, S: float, W_bar: float, C: float, d: npt.ArrayLike, B: float, q0: float, steps: int,
                      skip: int = 0) -> float:
    """The Lyapunov exponent of the noiseless map (2) along the path from
    ``q0``: the mean of ``ln|f'(q[n])|`` (4) over steps ``skip..steps-1``,
    per step. Negative: nearby paths close in (a stable fixed point or
    cycle); positive: they separate (chaos); near 0: marginal. A step
    clipped at 0 or B has slope 0 and makes the exponent ``-inf`` (the
    clipped map forgets where it came from). Arguments as :func:`trajectory`;
    ``skip`` leaves out the transient."""
    if isinstance(skip, bool) or not isinstance(skip, (int, np.integer)) or not 0 <= skip < steps:
        raise ModelError(f"skip must be a whole number in [0, steps) = [0, {steps!r}), got {skip!r}")
    q = trajectory(S=S, W_bar=W_bar, C=C, d=d, B=B, q0=q0, steps=steps)
    f = drift_map(q[skip:steps], S=S, W_bar=W_bar, C=C, d=d)
    if np.any((f < 0) | (f > B)):
        return -math.inf
    slope = np.abs(drift_map_prime(q[skip:steps], S=S, W_bar=W_bar, C=C, d=d))
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log(slope)))


# Stationary distribution: discretised Markov chain and Gaussian approximation


def transition_matrix(*, S: float, W_bar: float, C: float, d: npt.ArrayLike, B: float, sigma: float, L: float) -> FloatArray:
    """The transition matrix of (2) discretised in packets of ``L`` bits:
    states ``i = 0..M``, ``M = floor(B/L)``, state i standing for a queue of
    ``i*L`` bits, and::

        T(i, j) = P(j <= min(B, max(0, f(i*L) + xi)) / L < j+1),  xi ~ N(0, N*S^2*sigma^2)

    so state 0 takes the mass clipped at 0 (``f + xi < L``) and state M the
    mass clipped at B (``f + xi >= M*L``). ``sigma`` (bits/s) must be
    positive: without noise the chain is a deterministic map on the grid and
    need not have a unique stationary distribution. Other arguments as
    :func:`trajectory`. Rows sum to 1."""
    S = _positive("S", S, "seconds")
    W_bar = _positive("W_bar", W_bar, "bits")
    C = _positive("C", C, "bits/s")
    dk = _flow_delays(d)
    B = _positive("B", B, "bits")
    sigma = _positive("sigma", sigma, "bits/s")
    L = _positive("L", L, "bits")
    M = math.floor(B / L)
    if M + 1 > MAX_STATES:
        raise ModelError(
            f"B/L = {B / L:.6g} gives {M + 1} states, more than the {MAX_STATES} a dense chain is built "
            "for; choose a larger packet size L"
        )

    states = L * np.arange(M + 1, dtype=np.float64)
    mean = _drift(states, S, W_bar, C, dk * C)  # f(i*L), one per row
    sd = math.sqrt(dk.size) * S * sigma
    # z of each bin's lower edge: -inf for bin 0 (it takes everything below
    # L), then L, 2L, ..., M*L; bin j is [edge_j, edge_{j+1}), the last bin
    # open above.
    edges = np.concatenate(([-np.inf], L * np.arange(1, M + 1), [np.inf]))
    z = (edges[np.newaxis, :] - mean[:, np.newaxis]) / sd
    lo, hi = z[:, :-1], z[:, 1:]
    # P(lo <= Z < hi) as a difference of lower tails below the mean and of
    # upper tails above it, so that tail bins keep their relative precision.
    return np.where(lo > 0, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))


@dataclass(frozen=True, eq=False)
class StationaryDistribution:
    """The stationary distribution ``pi`` of the discretised chain: ``pi[j]``
    is the probability of state j, a queue of ``q_bits[j] = j*L`` bits;
    ``mean_bits`` and ``var_bits`` are its mean (bits) and variance (bits^2)."""

    q_bits: FloatArray
    pi: FloatArray
    mean_bits: float
    var_bits: float


def stationary_distribution(
    *, S: float, W_bar: float, C: float, d: npt.ArrayLike, B: float, sigma: float, L: float
) -> StationaryDistribution:
    """The solution of ``pi = pi T``, ``sum_j pi_j = 1``, for the chain of
    :func:`transition_matrix` (same arguments).

    Solved as one linear system: ``(T^T - I) pi = 0`` with its last equation
    (redundant, since the rows of T sum to 1) replaced by the normalisation.
    The system is regular when the chain has a single closed class, which
    Gaussian noise gives unless sigma is so small that the normal tails
    underflow between separate attractors; that case is detected from the
    residual and reported as a ModelError.

    Note that a state stands for the lower edge ``j*L`` of its bin, so the
    chain's mean sits about ``L/2`` below the continuous queue's; choose
    ``L`` small against the queue's standard deviation for the two to agree.
    """
    T = transition_matrix(S=S, W_bar=W_bar, C=C, d=d, B=B, sigma=sigma, L=L)
    n = T.shape[0]
    A = T.T - np.eye(n)
    A[-1, :] = 1.0
    b = np.zeros(n)
    b[-1] = 1.0
    try:
        pi = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        pi = np.full(n, np.nan)
    residual = float(np.abs(pi @ T - pi).sum()) if np.all(np.isfinite(pi)) else math.inf
    if not (residual < 1e-9 and pi.min() > -1e-9):
        raise ModelError(
            f"the discretised chain has no unique stationary distribution for sigma = {sigma!r} bits/s "
            f"and L = {L!r} bits (residual {residual:.3g}); make sigma larger against L"
        )
    # Round-off can leave entries of order -1e-17 where pi is 0.
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    q_bits = float(L) * np.arange(n, dtype=np.float64)
    mean = float(pi @ q_bits)
    var = float(pi @ (q_bits - mean) ** 2)
    return StationaryDistribution(q_bits=q_bits, pi=pi, mean_bits=mean, var_bits=var)


@dataclass(frozen=True)
class GaussianApproximation:
    """The linear (Gaussian) approximation of the stationary queue:
    ``mean_bits = q_e`` (bits), ``var_bits`` the variance of q (bits^2), and
    ``var_q_over_S`` the variance of ``q/S`` ((bits/s)^2), the form the paper
    gives, ``var_bits = S^2 * var_q_over_S``."""

    mean_bits: float
    var_bits: float
    var_q_over_S: float


def gaussian_approximation(*, S: float, W_bar: float, C: float, d: npt.ArrayLike, sigma: float) -> GaussianApproximation:
    """Equation (2) linearised at ``q_e`` and without clipping,
    ``q[n+1] - q_e = f'(q_e) (q[n] - q_e) + xi[n]``, an AR(1) process whose
    stationary law is normal with mean ``q_e`` and::

        Var(q/S) = N*sigma^2 / (1 - f'(q_e)^2),   Var(q) = S^2 * Var(q/S)

    ``sigma`` in bits/s; other arguments as :func:`drift_map`. There is no
    stationary linear approximation when ``|f'(q_e)| >= 1`` (ModelError).
    The approximation ignores the buffer limits 0 and B, so it is only
    meaningful when ``q_e`` is several standard deviations from both."""
    sigma = _non_negative("sigma", sigma, "bits/s")
    st = stability(S=S, W_bar=W_bar, C=C, d=d)
    if abs(st.f_prime) >= 1:
        raise ModelError(
            f"the linear approximation has no stationary law: |f'(q_e)| = {abs(st.f_prime):.6g} >= 1 "
            f"(S = {S:.6g} s; it needs S < 2*s_monotone_bound = {2 * st.s_monotone_bound:.6g} s)"
        )
    var_rate = _flow_delays(d).size * sigma**2 / (1.0 - st.f_prime**2)
    return GaussianApproximation(mean_bits=st.q_e, var_bits=S**2 * var_rate, var_q_over_S=var_rate)


# Command line: aqmlab model lindley

# The CLI prints the stationary distribution from the first to the last
# state above this probability; the states left out hold less than this each.
_PRINTED_PI = 1e-12


@register(
    "lindley",
    "Queue dynamics under Adaptive RED with a fixed drop probability (Jou, Tan, Baras): "
    "equilibrium, stability bounds, stationary distribution by Markov chain and Gaussian approximation",
    Param("N", int, 20, "number of persistent TCP flows"),
    Param("W_bar", float, 6.02e4, "mean window of each flow, bits"),
    Param("C", float, 6e6, "link rate, bits/s", unit="bps"),
    Param("d", float, 0.064, "fixed round-trip delay of every flow, s", unit="s"),
    Param("S", float, None, "sampling interval, s (default: the round-trip time at equilibrium, N*W_bar/C)",
          unit="s"),
    Param("B", float, 4e6, "buffer, bits (default 500 packets of 1000 bytes)"),
    Param("sigma", float, 77021.0, "standard deviation of each flow's rate, bits/s"),
    Param("L", float, 8000.0, "packet size of the discretised chain, bits"),
)
def lindley(*, N: int, W_bar: float, C: float, d: float, S: float | None, B: float, sigma: float, L: float) -> Quantities:
    """The queue-dynamics model for N flows with equal delay: the scalars of
    :func:`stability`, the Markov chain's ``mean``/``var`` and the Gaussian
    approximation's ``gauss_mean``/``gauss_var`` (bits, bits^2; NaN when
    ``|f'(q_e)| >= 1``), and the chain's ``distribution`` over ``q_bits``.

    The default buffer, 4e6 bits, is twice the equilibrium queue of C4's
    larger case (N = 40: q_e = 2.024e6 bits) and 4.9 times the smaller
    (N = 20: 8.2e5 bits), so the default S = RTT keeps both far from the
    buffer; it is 501 states at L = 8000 bits, built and solved in tens of ms."""
    dk = delays(N, d)
    if S is None:
        S = N * _positive("W_bar", W_bar, "bits") / _positive("C", C, "bits/s")
    st = stability(S=S, W_bar=W_bar, C=C, d=dk)
    chain = stationary_distribution(S=S, W_bar=W_bar, C=C, d=dk, B=B, sigma=sigma, L=L)
    try:
        gauss = gaussian_approximation(S=S, W_bar=W_bar, C=C, d=dk, sigma=sigma)
        gauss_mean, gauss_var = gauss.mean_bits, gauss.var_bits
    except ModelError:
        gauss_mean = gauss_var = math.nan
    shown = np.flatnonzero(chain.pi > _PRINTED_PI)
    first, last = int(shown[0]), int(shown[-1]) + 1
    return {
        "S": S,
        "q_e": st.q_e,
        "f_prime": st.f_prime,
        "s_gas_bound": st.s_gas_bound,
        "s_monotone_bound": st.s_monotone_bound,
        "s_monotone_paper_bound": st.s_monotone_paper_bound,
        "gas": st.gas,
        "monotone": st.monotone,
        "mean": chain.mean_bits,
        "var": chain.var_bits,
        "gauss_mean": gauss_mean,
        "gauss_var": gauss_var,
        "q_bits": chain.q_bits[first:last],
        "distribution": chain.pi[first:last],
    }
