"""The analytic models against closed forms and hand computations, among
them the throughput formulas of Mathis et al. (1997) and Padhye et al. (1998)
worked out for fixed inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aqmlab import models
from aqmlab.exceptions import ModelError
from aqmlab.models import Red
from aqmlab.models.bonald import stationary

EX1 = Red(20, 40, 1.0)  # Bonald et al.'s Example 1
EX2 = Red(10, 30, 0.1)  # and Example 2


def mm1k_loss(rho: float, K: int) -> float:
    return rho**K * (1 - rho) / (1 - rho ** (K + 1)) if rho != 1 else 1 / (K + 1)


def mm1k_mean(rho: float, K: int) -> float:
    return sum(k * rho**k for k in range(K + 1)) / sum(rho**k for k in range(K + 1))


# --- M/M/1/K and M/D/1 --------------------------------------------------------


@pytest.mark.parametrize("rho", [0.3, 0.9, 1.0, 1.2, 2.0, 3.0])
@pytest.mark.parametrize("K", [1, 5, 10, 40])
def test_mm1k_matches_the_closed_forms(rho: float, K: int) -> None:
    m = models.mm1k(rho, K)
    assert m.loss == pytest.approx(mm1k_loss(rho, K), rel=1e-9)
    assert m.mean == pytest.approx(mm1k_mean(rho, K), rel=1e-9)
    assert m.distribution.sum() == pytest.approx(1, abs=1e-12)
    # Little: sojourn = L / accepted rate.
    assert m.delay_mean == pytest.approx(m.mean / (rho * (1 - m.loss)), rel=1e-12)


@pytest.mark.parametrize("eps", [0.0, 2.2e-16, -1.1e-16, 1e-9, 1e-5])
def test_mm1k_near_load_one(eps: float) -> None:
    # At rho = 1 + eps the mean is K/2 + eps K(K+2)/12 + O(eps^2).
    m = models.mm1k(1.0 + eps, 10)
    assert m.mean == pytest.approx(5 + eps * 10 * 12 / 12, rel=1e-9)
    assert m.loss == pytest.approx(1 / 11, rel=1e-4 if eps else 1e-15)


def test_mm1k_small_load_large_buffer() -> None:
    m = models.mm1k(0.01, 200)
    assert np.isfinite(m.distribution).all() and m.loss == 0.0
    assert m.mean == pytest.approx(0.01 / 0.99, rel=1e-12)  # the M/M/1 mean rho / (1 - rho)
    q = models.queue_distribution(0.01, 200)
    assert q.mean == pytest.approx(0.01 / 0.99, rel=1e-12)


def test_an_arrival_never_accepted_is_an_error() -> None:
    with pytest.raises(ModelError, match="every arrival is dropped"):
        models.queue_distribution(1.0, 5, Red(0, 0.5, 1.0))


def test_mm1k_hand_values() -> None:
    # K = 1: loss rho / (1 + rho), L = rho / (1 + rho).
    m = models.mm1k(2.0, 1)
    assert (m.loss, m.mean) == (pytest.approx(2 / 3, rel=1e-12), pytest.approx(2 / 3, rel=1e-12))
    # rho = 1: uniform, loss 1/(K+1), L = K/2, Var = K(K+2)/12.
    m = models.mm1k(1.0, 10)
    assert (m.loss, m.mean, m.var) == (1 / 11, 5.0, pytest.approx(10 * 12 / 12, rel=1e-12))


def test_md1_pollaczek_khinchine() -> None:
    # rho 0.8, service 0.8 ms (1250 packets/s): Wq = 0.8 / (2 * 1250 * 0.2) = 1.6 ms.
    m = models.md1(0.8, 1250.0)
    assert m.wait_mean == pytest.approx(1.6e-3, rel=1e-12)
    assert m.queue_mean == pytest.approx(0.64 / 0.4, rel=1e-12)
    assert m.mean == pytest.approx(1.6 + 0.8, rel=1e-12)
    assert m.queue_mean == pytest.approx(0.8 * 1250 * m.wait_mean, rel=1e-12)  # Little
    with pytest.raises(ModelError, match="stable only"):
        models.md1(1.0)


# --- Bonald et al.: chains ---------------------------------------------------


def test_gth_solver_on_a_three_state_chain() -> None:
    # A cycle 0 -> 1 -> 2 -> 0 at rates 1, 2, 4: pi proportional to 1/rate.
    q = np.array([[0, 1, 0], [0, 0, 2], [4, 0, 0]], dtype=float)
    assert stationary(q) == pytest.approx(np.array([4, 2, 1]) / 7, rel=1e-14)


@pytest.mark.parametrize("rho", [0.5, 0.9, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("K", [1, 10, 40])
def test_batch_chain_with_b1_is_mm1k(rho: float, K: int) -> None:
    assert models.drop_probability(rho, K, B=1) == pytest.approx(mm1k_loss(rho, K), rel=1e-9)


def tail_drop_batch_loss(rho: float, K: int, B: int) -> float:
    """An independent Tail Drop batch chain: a batch at rate rho/B takes the
    queue from k to min(K, k + B); solved by least squares on pi Q = 0."""
    q = np.zeros((K + 1, K + 1))
    for k in range(K + 1):
        if k < K:
            q[k, min(K, k + B)] += rho / B
        if k > 0:
            q[k, k - 1] += 1.0
        q[k, k] = -q[k].sum()
    a = np.vstack([q.T, np.ones(K + 1)])
    pi = np.linalg.lstsq(a, np.r_[np.zeros(K + 1), 1.0], rcond=None)[0]
    return sum(pi[K - j] * (B - j) / B for j in range(min(B, K + 1)))


@pytest.mark.parametrize("B", [1, 3, 5, 10])
def test_red_chain_with_min_th_at_k_is_tail_drop(B: int) -> None:
    rho = [0.8, 1.0, 2.0, 3.0]
    red = models.drop_probability(np.array(rho), 40, B, Red(40, 60, 0.5))
    assert red == pytest.approx([tail_drop_batch_loss(r, 40, B) for r in rho], rel=1e-8)


def test_batch_larger_than_the_buffer() -> None:
    # K = 3, B = 7: every batch fills the queue and loses the rest.
    assert models.drop_probability(1.0, 3, B=7) == pytest.approx(tail_drop_batch_loss(1.0, 3, 7), rel=1e-9)
    pb, ps = models.mix_drop_probability(1.0, 0.5, 3, 7)
    assert 0 < ps < pb < 1


def test_tail_drop_batch_formula_by_hand() -> None:
    # K = 2, B = 2, rho = 1 (batches at rate 1/2): 0 -> 2 at 1/2, 1 -> 2 at
    # 1/2 (one of the two fits), 1 -> 0 and 2 -> 1 at 1. Balance: state 0,
    # pi0/2 = pi1; state 2, pi2 = (pi0 + pi1)/2 = 3 pi0/4. So pi = (4, 2, 3)/9
    # and P_TD = pi(2) (2/2) + pi(1) (1/2) = 3/9 + 1/9 = 4/9.
    assert models.drop_probability(1.0, 2, B=2) == pytest.approx(4 / 9, rel=1e-12)


def test_red_batch_drop_is_sum_of_pi_d_without_overflow() -> None:
    # B = 1 with Example 1: P_RED = sum pi(k) d(k) over the birth-death chain.
    for rho in (0.8, 2.0):
        q = models.queue_distribution(rho, 40, EX1)
        d = models.drop_vector(40, EX1)
        assert models.drop_probability(rho, 40, 1, EX1) == pytest.approx(q.distribution @ d, rel=1e-9)


def test_conventions_shift_the_drop_function() -> None:
    d_arr = models.drop_vector(5, Red(1, 4, 0.6))
    d_sys = models.drop_vector(5, Red(1, 4, 0.6), count_arrival=False)
    d_wait = models.drop_vector(5, Red(1, 4, 0.6), count_arrival=False, count_in_service=False)
    # d(x) = 0.2 (x - 1) on [1, 4), 1 from 4; d(K) = 1 always.
    assert d_arr == pytest.approx([0, 0.2, 0.4, 1, 1, 1])  # x = k + 1
    assert d_sys == pytest.approx([0, 0, 0.2, 0.4, 1, 1])  # x = k
    assert d_wait == pytest.approx([0, 0, 0, 0.2, 0.4, 1])  # x = max(k - 1, 0)


def test_mix_per_stream_drop_probabilities() -> None:
    pb, ps = models.mix_drop_probability(2.0, np.array([0.0, 0.5, 1.0]), 40, 3)
    # No bursty stream: the Poisson stream sees M/M/1/40 at load 2.
    assert math.isnan(pb[0]) and ps[0] == pytest.approx(mm1k_loss(2.0, 40), rel=1e-9)
    # All bursty: the batch chain of 1.1.
    assert pb[2] == pytest.approx(models.drop_probability(2.0, 40, 3), rel=1e-9)
    # Tail Drop: the Poisson stream is lost only at K, the bursty one also below.
    assert pb[1] > ps[1]
    # With B = 1 the "bursty" stream is Poisson too: both equal M/M/1/K.
    pb1, ps1 = models.mix_drop_probability(0.9, 0.3, 10, 1)
    assert pb1 == pytest.approx(ps1, rel=1e-12) and ps1 == pytest.approx(mm1k_loss(0.9, 10), rel=1e-9)
    # RED drops both streams alike (up to the bursty stream's overflow, nil here).
    pb, ps = models.mix_drop_probability(2.0, 0.5, 40, 3, EX2)
    assert pb == pytest.approx(ps, rel=1e-5)


# --- consecutive drops ---------------------------------------------------------


@pytest.mark.parametrize("rho", [0.5, 1.0, 2.0, 3.0])
def test_tail_drop_run_length_closed_forms(rho: float) -> None:
    run = models.consecutive_drops_td(rho)
    assert run.mean == pytest.approx(rho + 1, rel=1e-9)
    assert run.var == pytest.approx(rho * (rho + 1), rel=1e-9)
    p = rho / (rho + 1)
    assert run.distribution[:5] == pytest.approx((1 - p) * p ** np.arange(5), rel=1e-12)
    # The distribution itself gives the same moments.
    n = run.n
    m = float(n @ run.distribution)
    assert m == pytest.approx(rho + 1, rel=1e-9)
    assert float((n - m) ** 2 @ run.distribution) == pytest.approx(rho * (rho + 1), rel=1e-9)


@pytest.mark.parametrize("rho", [1.0, 2.0, 3.0])
def test_exact_run_chain_gives_the_geometric_law_for_tail_drop(rho: float) -> None:
    run = models.consecutive_drops_red(rho, 40, None, method="exact")
    assert run.mean == pytest.approx(rho + 1, rel=1e-9)
    assert run.var == pytest.approx(rho * (rho + 1), rel=1e-9)


def test_approximation_2_by_hand() -> None:
    # K = 3, d(k) = (0, 0, 1/2, 1) by count_arrival=False with min_th 1,
    # max_th 3, max_p 1: d(x) = (x - 1)/2. Only k = 2 drops below K, so
    # P(N > n) = (1/2)^n: geometric with mean 2, variance 2.
    run = models.consecutive_drops_red(1.0, 3, Red(1, 3, 1.0), method="approx2", count_arrival=False)
    assert run.mean == pytest.approx(2.0, rel=1e-12)
    assert run.var == pytest.approx(2.0, rel=1e-12)
    assert run.distribution[:3] == pytest.approx([0.5, 0.25, 0.125])


def test_approximation_2_weights_states_by_pi_d() -> None:
    # Two dropping states below K: with w_k = pi(k) d(k), P(N > n) = sum w_k
    # d_k^n / sum w_k, so E[N] = sum_n P(N > n) = sum w_k / (1 - d_k) / sum w_k.
    red = Red(1, 4, 0.6)  # with count_arrival=False and K = 4: d = (0, 0, 0.2, 0.4, 1)
    pi = models.queue_distribution(1.5, 4, red, count_arrival=False).distribution
    dk = np.array([0.2, 0.4])
    w = pi[2:4] * dk
    mean = float((w / (1 - dk)).sum() / w.sum())
    run = models.consecutive_drops_red(1.5, 4, red, method="approx2", count_arrival=False)
    assert run.mean == pytest.approx(mean, rel=1e-12)


def test_exact_run_length_by_hand() -> None:
    # K = 1 and RED that drops an arrival to an idle queue with d0 = 1/2
    # (count_arrival, min_th 0, max_th 2, max_p 1: d(1) = 1/2) and always at
    # K. The run ends only at an arrival that finds the queue empty and wins
    # its coin. From a drop in state 1: the next arrival finds 1 with p =
    # rho/(1+rho), else 0. Take rho = 1: from state 1, next drop w.p.
    # 1/2 (finds 1) + 1/2 * 1/2 (finds 0, loses the coin) = 3/4; from state 0
    # (after a drop there) the next arrival finds 0: drop w.p. 1/2.
    run = models.consecutive_drops_red(1.0, 1, Red(0, 2, 1.0), method="exact")
    # Runs start after an accepted arrival, always into state 1, and the
    # first drop of the run is the arrival that finds 1 (prob 1/2 of the
    # next arrival) or finds 0 and loses (1/4): state at the first drop is
    # 1 w.p. 2/3, 0 w.p. 1/3. Then P(N > 1) = 2/3 * 3/4 + 1/3 * 1/2 = 2/3.
    assert 1 - run.distribution[0] == pytest.approx(2 / 3, rel=1e-12)


def test_approximation_2_refuses_d_of_one_below_k() -> None:
    with pytest.raises(ModelError, match="count_arrival=False"):
        models.consecutive_drops_red(2.0, 40, EX1, method="approx2")


# --- queue size -----------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.5, 1.0, 2.0])
def test_queue_distribution_tail_drop_is_truncated_geometric(rho: float) -> None:
    q = models.queue_distribution(rho, 40)
    assert q.mean == pytest.approx(mm1k_mean(rho, 40), rel=1e-9)
    assert q.loss == pytest.approx(mm1k_loss(rho, 40), rel=1e-9)
    red = models.queue_distribution(rho, 40, Red(40, 50, 0.3))
    assert red.distribution == pytest.approx(q.distribution, rel=1e-9)


def test_red_queue_distribution_by_hand() -> None:
    # K = 2, rho = 1, count_arrival: d(0 + 1) with Red(0, 2, 1) = 1/2, d(K) = 1.
    # pi ~ (1, 1/2, 0)... d(1 + 1) = 1 so state 2 is never reached.
    q = models.queue_distribution(1.0, 2, Red(0, 2, 1.0), mu=4.0)
    assert q.distribution == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert q.mean == pytest.approx(1 / 3)
    assert q.loss == pytest.approx(2 / 3 * 0.5 + 1 / 3 * 1.0)
    # Little: accepted rate rho mu (1 - loss) = 4 / 3 per s, so T = (1/3) / (4/3).
    assert q.delay_mean == pytest.approx(0.25)


def test_engine_convention_matches_the_simulator_chain() -> None:
    # crates/sim/tests/aqm_runs.rs solves this chain in Rust: Example 1 with
    # a 40-packet limit (K = 41), the backlog behind the packet in service
    # and without the arrival: E[W] = 29.99627 waiting, Var[W] = 10.04849.
    q = models.queue_distribution(2.0, 41, EX1, count_arrival=False, count_in_service=False)
    waiting = np.maximum(q.k - 1, 0)
    ew = float(waiting @ q.distribution)
    assert ew == pytest.approx(29.99627, abs=5e-6)
    assert float((waiting - ew) ** 2 @ q.distribution) == pytest.approx(10.04849, abs=5e-6)


# --- TCP throughput (Mathis et al., Padhye et al.) -----------------------------------


def test_mathis_vectors() -> None:
    assert models.mathis(0.01, 0.1, constant=1) * 1460 == pytest.approx(146_000, rel=1e-4)
    assert models.mathis(0.01, 0.1) * 1460 == pytest.approx(178_813, rel=1e-4)
    assert models.mathis(0.01, 0.1, b=2) * 1460 == pytest.approx(126_440, rel=1e-4)
    assert models.mathis(0.001, 0.1) == pytest.approx(387.298, rel=1e-4)


@pytest.mark.parametrize(("b", "T0", "E_W", "Q", "full", "approx"), [
    (1, 1.0, 17.2788, 0.2105, 98.829, 99.920),
    (1, 0.4, 17.2788, 0.2105, 110.960, 112.332),
    (2, 1.0, 12.1751, 0.2799, 69.524, 70.654),
    (2, 0.4, 12.1751, 0.2799, 77.846, 79.431),
])
def test_padhye_vectors(b: int, T0: float, E_W: float, Q: float, full: float, approx: float) -> None:
    m = models.padhye(0.01, 0.1, T0, b=b)
    assert (m.E_W, m.Q) == (pytest.approx(E_W, rel=1e-4), pytest.approx(Q, rel=5e-4))
    assert (m.rate_pps, m.rate_approx_pps) == (pytest.approx(full, rel=1e-4), pytest.approx(approx, rel=1e-4))


def test_padhye_window_limited_and_small_p_vectors() -> None:
    assert models.padhye(0.01, 0.1, 1.0, b=1, W_max=10).rate_pps == pytest.approx(66.149, rel=1e-4)
    assert models.padhye(0.01, 0.1, 1.0, b=2, W_max=10).rate_pps == pytest.approx(61.498, rel=1e-4)
    m = models.padhye(0.001, 0.1, 1.0)
    assert (m.E_W, m.rate_pps, m.rate_approx_pps) == (pytest.approx(52.624, rel=1e-4),
                                                       pytest.approx(376.602, rel=1e-4),
                                                       pytest.approx(378.776, rel=1e-4))
    v = models.padhye(np.array([0.01, 0.001]), 0.1, 1.0)
    assert v.rate_pps == pytest.approx([98.829, 376.602], rel=1e-4)


# --- TED and fairness --------------------------------------------------------------


def test_jain_vectors() -> None:
    assert models.jain_index([1, 2, 3, 4]) == pytest.approx(0.83333, rel=1e-5)
    assert models.jain_index([1, 1, 1, 1]) == 1.0
    assert models.jain_index([10, 0, 0, 0]) == 0.25


def test_ted_max_queue() -> None:
    # 10 ports of 10 Gb/s, D = 125 us: 9 * 125e-6 * 10e9 / 8 = 1.40625 MB.
    assert models.ted_max_queue(125e-6, ports=10, rate_bps=10e9) == pytest.approx(1.40625e6, rel=1e-12)
    # Unequal inputs: the capacities other than the output's are summed.
    assert models.ted_max_queue(1e-3, [1e9, 2e9, 5e9]) == pytest.approx(1e6, rel=1e-12)
    grid = models.ted_max_queue(np.array([125e-6, 4e-3])[:, None], ports=np.array([10, 50]), rate_bps=10e9)
    assert (grid / 1e6).ravel() == pytest.approx([1.40625, 7.65625, 45.0, 245.0])


def test_ted_max_service_time() -> None:
    assert models.ted_max_service_time(0.002, 0.001) == pytest.approx(0.003)
    assert models.ted_max_service_time(0.002, 0.001, hops=3, per_hop=True) == pytest.approx(0.005)


def test_fair_goodput_water_filling() -> None:
    # 100 Mb/s, three connections; the longest-RTT one is window-limited at
    # 10 packets * 1000 B * 8 / 0.4 s = 200 kb/s; the others split the rest.
    o = models.fair_goodput(100e6, [0.01, 0.4, 0.02], [np.inf, 10, np.inf], 1000, 0)
    assert o == pytest.approx([(100e6 - 200e3) / 2, 200e3, (100e6 - 200e3) / 2], rel=1e-12)
    # Unequal windows: the order is by window-limited rate, not by RTT, so
    # the short-RTT connection, limited to 1 b/s, goes first and the other
    # gets its own limit, 80 b/s (taken by RTT it would get 50 and leave 49).
    o = models.fair_goodput(100.0, [2.0, 1.0], [20, 0.125], 1, 0)
    assert o == pytest.approx([80.0, 1.0], rel=1e-12)
    # No window limits: equal shares, less the header overhead.
    o = models.fair_goodput(300e6, [0.004, 0.016], np.inf, 1500, 40)
    assert o == pytest.approx([150e6 * 1460 / 1500] * 2, rel=1e-12)


# --- REDopt -----------------------------------------------------------------------


def test_redopt_is_a_fixed_point_of_its_steps() -> None:
    p = models.redopt(10e6, 64, 0.15, 1514, udp_rate_bps=1e6)
    c = (10e6 - 1e6) / (8 * 1514)
    assert p.C == pytest.approx(c, rel=1e-12)
    r = 0.15 + p.q_star / c
    assert p.R == pytest.approx(r, rel=1e-9)
    p_star = 0.75 * (64 / (r * c)) ** 2
    assert p.p_star == pytest.approx(p_star, rel=1e-9)
    assert p.max_p == pytest.approx(min(1, 2.2 * p_star), rel=1e-9)
    w_g = 0.1 * min(2 * 64 / (r * r * c), 1 / r)
    assert p.w_g == pytest.approx(w_g, rel=1e-9)
    assert p.w_q == pytest.approx(1 - math.exp(-w_g / c), rel=1e-9)
    # The Hollot et al. condition holds with equality at the smallest D.
    assert p.max_p / p.D == pytest.approx(math.sqrt(2) * (2 * 64) ** 2 / (r * c) ** 3, rel=1e-9)
    # Unclamped: D = (3/b) 1.1 R C / (4 sqrt 2), and the average aims at the midpoint.
    assert p.D == pytest.approx(1.5 * 1.1 * r * c / (4 * math.sqrt(2)), rel=1e-9)
    assert (p.min_th + p.max_th) / 2 == pytest.approx(p.q_star, rel=1e-12)
    assert p.max_th - p.min_th == pytest.approx(p.D, rel=1e-12)
    assert p.buffer == pytest.approx(max(2 * p.max_th, 0.15 * c), rel=1e-12)


def test_redopt_thresholds_do_not_depend_on_n_until_the_window_floor_binds() -> None:
    # By hand: max_p = 2 * 1.1 * (3/4) (N / (R C))^2 and D = max_p (R C)^3 / (sqrt(2) (2N)^2)
    # give D = 3.3 / (8 sqrt(2)) R C = 0.29168 R C for every N. With q* = D, R C = R0 C + D, so
    # D = k R0 C / (1 - k) and R = R0 / (1 - k); C = 9 Mb/s / (8 x 1514 B) = 743.06 packets/s.
    k = 3.3 / (8 * math.sqrt(2))
    c = 9e6 / (8 * 1514)
    d = k * 0.15 * c / (1 - k)
    for n in (16, 32, 64, 78):
        p = models.redopt(10e6, n, 0.15, 1514, udp_rate_bps=1e6)
        assert p.D == pytest.approx(d, rel=1e-9) and p.R == pytest.approx(0.15 / (1 - k), rel=1e-9)
        assert p.min_th == pytest.approx(d / 2, rel=1e-9) and p.max_th == pytest.approx(1.5 * d, rel=1e-9)
        assert p.buffer == pytest.approx(3 * d, rel=1e-9) and p.q_star == pytest.approx(d, rel=1e-9)
        assert p.max_p == pytest.approx(2.2 * 0.75 * (n * (1 - k) / (0.15 * c)) ** 2, rel=1e-9)
    # The floor N w_min - R0 C reaches D at N = R0 C / ((1 - k) w_min) = 78.68 flows; above it q* grows.
    assert models.redopt(10e6, 79, 0.15, 1514, udp_rate_bps=1e6).q_star > d + 0.5


def test_redopt_keeps_every_flow_a_minimal_window() -> None:
    # 256 flows over 0.15 s * 743 packets/s: the pipe holds 111 packets, so
    # q* = N w_min - R0 C = 512 - 111 at the fixed point, and then p* =
    # (3/4) (N / (2N))^2 = 0.1875 (each flow's window is w_min = 2).
    p = models.redopt(10e6, 256, 0.15, 1514, udp_rate_bps=1e6)
    assert p.q_star == pytest.approx(512 - 0.15 * p.C, rel=1e-9)
    assert p.p_star == pytest.approx(0.1875, rel=1e-9)


def test_model_errors_name_the_parameter() -> None:
    with pytest.raises(ModelError, match="leaves no capacity"):
        models.redopt(1e6, 4, 0.1, udp_rate_bps=2e6)
    with pytest.raises(ModelError, match="min_th < max_th"):
        Red(30, 20, 0.1)
    with pytest.raises(ModelError, match=r"p \(loss probability\)"):
        models.mathis(0.0, 0.1)
    with pytest.raises(ModelError, match="K "):
        models.drop_probability(1.0, 0)


# --- plotting helpers ------------------------------------------------------------


def test_plot_helpers_draw_the_model_values() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aqmlab.models import jou, plots

    fig, (a, b, c) = plt.subplots(1, 3)
    run = models.consecutive_drops_td(2.0)
    line = plots.run_lengths(a, run, "TD model", n_max=15)
    assert list(line.get_xdata()) == list(range(1, 16))
    assert line.get_ydata() == pytest.approx(run.distribution[:15])
    q = models.queue_distribution(2.0, 40, EX1)
    assert plots.queue_sizes(b, q, "RED model").get_ydata() == pytest.approx(q.distribution)
    d = jou.delays(20, 0.064)
    f = plots.lindley_map(c, S=0.2, W_bar=6.02e4, C=6e6, d=d, B=4e6)
    x, y = f.get_xdata(), f.get_ydata()
    assert y == pytest.approx(np.clip(jou.drift_map(x, S=0.2, W_bar=6.02e4, C=6e6, d=d), 0, 4e6))
    q_e = c.lines[-1].get_xdata()[0]
    assert q_e == pytest.approx(20 * 6.02e4 - 0.064 * 6e6, rel=1e-12)  # N W - d C
    plt.close(fig)
