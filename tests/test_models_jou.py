"""The queue-dynamics model of Jou, Tan and Baras (aqmlab.models.jou) against
closed forms worked out by hand: the equilibrium, the slope at it, the
stability bounds, the behaviour of the deterministic map at S = RTT and S = 2
RTT, and the Markov chain against the Gaussian approximation."""

import math
import time

import numpy as np
import pytest

from aqmlab.exceptions import ModelError
from aqmlab.models import jou
from aqmlab.models.registry import MODELS

# Constants: study C4's (aqmlab.studies.parallel_queue).
W_BAR = 6.02e4  # bits
C = 6e6  # bits/s
D = 0.064  # s
SIGMA = {20: 77021.0, 40: 128490.0}  # bits/s
B = 4e6  # bits
L = 8000.0  # bits


# Helpers


def c4(N: int) -> dict:
    """The C4 flows: keyword arguments shared by every function."""
    return {"W_bar": W_BAR, "C": C, "d": jou.delays(N, D)}


def rtt(N: int, W_bar: float = W_BAR, C: float = C) -> float:
    """Round-trip time at equilibrium, d + q_e/C = N*W_bar/C (homogeneous)."""
    return N * W_bar / C


def phi(z: float) -> float:
    """Standard normal CDF, written out independently of scipy."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


# Equilibrium


@pytest.mark.parametrize(
    "N, W_bar, C, d",
    [(20, 6.02e4, 6e6, 0.064), (40, 6.02e4, 6e6, 0.064), (1, 1.2e5, 1e6, 0.1), (100, 8e4, 1e8, 0.02)],
)
def test_homogeneous_equilibrium_is_closed_form(N, W_bar, C, d):
    q_e = jou.equilibrium(W_bar=W_bar, C=C, d=jou.delays(N, d))
    assert q_e == pytest.approx(N * W_bar - d * C, rel=1e-9)


def test_c4_equilibria_by_hand():
    # 20 * 6.02e4 - 0.064 * 6e6 = 1.204e6 - 3.84e5; and 2.408e6 - 3.84e5.
    assert jou.equilibrium(**c4(20)) == pytest.approx(8.2e5, rel=1e-12)
    assert jou.equilibrium(**c4(40)) == pytest.approx(2.024e6, rel=1e-12)


def test_heterogeneous_equilibrium_two_groups_is_the_quadratic_root():
    # n1 flows at d1 and n2 at d2: with x = q/C, n1*W/(d1+x) + n2*W/(d2+x) = C
    # is C x^2 + (C(d1+d2) - (n1+n2)W) x + C d1 d2 - W(n1 d2 + n2 d1) = 0.
    n1, n2, d1, d2 = 10, 10, 0.032, 0.128
    a = C
    b = C * (d1 + d2) - (n1 + n2) * W_BAR
    c = C * d1 * d2 - W_BAR * (n1 * d2 + n2 * d1)
    x = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    d = np.array([d1] * n1 + [d2] * n2)
    assert jou.equilibrium(W_bar=W_BAR, C=C, d=d) == pytest.approx(x * C, rel=1e-9)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_heterogeneous_equilibrium_solves_the_defining_equation(seed):
    d = np.random.default_rng(seed).uniform(0.016, 0.240, size=30)
    q_e = jou.equilibrium(W_bar=W_BAR, C=C, d=d)
    total_rate = np.sum(W_BAR / (d + q_e / C))
    assert abs(total_rate - C) / C < 1e-9
    # Each rate is between those of the flows with the largest and the
    # smallest delay, so N*W - C*max d <= q_e <= N*W - C*min d.
    assert 30 * W_BAR - C * d.max() <= q_e <= 30 * W_BAR - C * d.min()


def test_heterogeneous_equilibrium_tends_to_the_homogeneous_one():
    # Delays spread by 1e-9 relative take the root-finding path; the bounds
    # above then pin q_e within C*D*1e-9 = 4e-4 bits of N*W - D*C.
    d = D * (1 + 1e-9 * np.linspace(0, 1, 20))
    assert jou.equilibrium(W_bar=W_BAR, C=C, d=d) == pytest.approx(20 * W_BAR - D * C, rel=1e-9)
    assert jou.equilibrium(W_bar=W_BAR, C=C, d=np.full(20, D)) == pytest.approx(20 * W_BAR - D * C, rel=1e-9)


def test_flows_that_cannot_fill_the_link_are_refused():
    # 2 flows: 2 * 6.02e4 / 0.064 = 1.88e6 bits/s < 6e6.
    with pytest.raises(ModelError, match=r"sum_k W_bar/d_k >= C") as e:
        jou.equilibrium(W_bar=W_BAR, C=C, d=jou.delays(2, D))
    assert "1.88125e+06" in str(e.value) and "6e+06" in str(e.value)
    with pytest.raises(ModelError, match=r"peak-rate"):
        jou.stability(S=0.1, W_bar=W_BAR, C=C, d=[0.064, 0.5])


def test_exact_peak_rate_gives_an_empty_queue():
    # Values exact in binary: 3 * 1000/0.5 = 6000 and 1000/0.5 + 1000/0.25 = 6000.
    assert jou.equilibrium(W_bar=1000.0, C=6000.0, d=jou.delays(3, 0.5)) == 0.0
    assert jou.equilibrium(W_bar=1000.0, C=6000.0, d=[0.5, 0.25]) == 0.0
    with pytest.raises(ModelError):
        jou.equilibrium(W_bar=1000.0, C=6000.0 * (1 + 1e-12), d=[0.5, 0.25])


def test_scalar_d_is_refused_with_a_hint():
    with pytest.raises(ModelError, match=r"delays\(N, d\)"):
        jou.equilibrium(W_bar=W_BAR, C=C, d=0.064)


@pytest.mark.parametrize("N", [20, 40])
def test_equilibrium_is_the_fixed_point_of_the_map(N):
    q_e = jou.equilibrium(**c4(N))
    for S in (0.5 * rtt(N), rtt(N), 2 * rtt(N)):
        assert jou.drift_map(q_e, S=S, **c4(N)) == pytest.approx(q_e, rel=1e-12)
    d = np.array([0.02, 0.05, 0.1, 0.2] * 10)
    q_e = jou.equilibrium(W_bar=W_BAR, C=C, d=d)
    assert jou.drift_map(q_e, S=0.3, W_bar=W_BAR, C=C, d=d) == pytest.approx(q_e, rel=1e-12)


def test_drift_map_is_vectorised_and_matches_equation_1():
    q = np.array([0.0, 1e5, 8.2e5, 3e6])
    S = 0.15
    by_hand = q + S * (20 * W_BAR * C / (q + D * C) - C)
    assert np.allclose(jou.drift_map(q, S=S, **c4(20)), by_hand, rtol=1e-13)
    assert isinstance(jou.drift_map(1e5, S=S, **c4(20)), float)


@pytest.mark.parametrize("N", [20, 40])
@pytest.mark.parametrize("S_rtt, by_hand", [(0.5, 0.5), (1.0, 1.0), (2.0, 2.0)])
def test_map_by_hand_where_the_window_is_half_the_equilibrium_one(N, S_rtt, by_hand):
    # At q = N*W/2 - d*C the round trip is half the equilibrium one, so the
    # flows send 2C: f(q) = q + S*(2C - C) = q + S*C, and with S = k*N*W/C,
    # f(q) = q + k*N*W. N = 20: 2.18e5 + k*1.204e6 (8.2e5, 1.422e6, 2.626e6);
    # N = 40: 8.2e5 + k*2.408e6 (2.024e6, 3.228e6, 5.636e6).
    q = {20: 2.18e5, 40: 8.2e5}[N]
    expected = {(20, 0.5): 8.2e5, (20, 1.0): 1.422e6, (20, 2.0): 2.626e6,
                (40, 0.5): 2.024e6, (40, 1.0): 3.228e6, (40, 2.0): 5.636e6}[(N, by_hand)]
    assert jou.drift_map(q, S=S_rtt * rtt(N), **c4(N)) == pytest.approx(expected, rel=1e-12)


# Stability


@pytest.mark.parametrize("N", [20, 40])
@pytest.mark.parametrize("ratio", [0.5, 1 - 1e-9, 1.0, 1 + 1e-9, 2.0])
def test_slope_at_equilibrium_by_hand(N, ratio):
    # Homogeneous: q_e + d*C = N*W, so f'(q_e) = 1 - S*W*C*N/(N*W)^2 = 1 - S*C/(N*W).
    S = ratio * rtt(N)
    st = jou.stability(S=S, **c4(N))
    assert st.f_prime == pytest.approx(1 - S * C / (N * W_BAR), abs=1e-12)
    assert st.s_monotone_bound == pytest.approx(rtt(N), rel=1e-12)
    assert st.monotone == (ratio <= 1)
    # The slope also by central difference of equation (1).
    h = 10.0
    fd = (jou.drift_map(st.q_e + h, S=S, **c4(N)) - jou.drift_map(st.q_e - h, S=S, **c4(N))) / (2 * h)
    assert st.f_prime == pytest.approx(fd, abs=1e-6)


def test_gas_bound_by_hand_and_at_zero():
    # Homogeneous: 2C/(W * N/d^2) = 2*C*d^2/(N*W) = 49152/1.204e6 s.
    st = jou.stability(S=0.01, **c4(20))
    assert st.s_gas_bound == pytest.approx(2 * C * D**2 / (20 * W_BAR), rel=1e-12)
    assert st.s_gas_bound == pytest.approx(0.04082392, rel=1e-6)
    assert st.gas
    # At the bound the slope at q = 0 (its minimum) is -1: forward difference.
    S = st.s_gas_bound
    h = 1.0
    fd = (jou.drift_map(h, S=S, **c4(20)) - jou.drift_map(0.0, S=S, **c4(20))) / h
    assert fd == pytest.approx(-1.0, abs=1e-4)
    assert not jou.stability(S=S, **c4(20)).gas  # the condition is strict


@pytest.mark.parametrize("N", [20, 40])
@pytest.mark.parametrize("q0", [0.0, B])
def test_below_the_gas_bound_every_start_converges(N, q0):
    S = 0.99 * jou.stability(S=0.01, **c4(N)).s_gas_bound
    q = jou.trajectory(S=S, **c4(N), B=B, q0=q0, steps=3000)
    assert q[-1] == pytest.approx(jou.equilibrium(**c4(N)), rel=1e-9)


def test_heterogeneous_monotone_bound_is_where_the_slope_crosses_zero():
    d = np.array([0.02, 0.05, 0.1, 0.2] * 10)
    st = jou.stability(S=0.1, W_bar=W_BAR, C=C, d=d)
    s_star = st.s_monotone_bound
    below = jou.drift_map_prime(st.q_e, S=s_star * (1 - 1e-9), W_bar=W_BAR, C=C, d=d)
    above = jou.drift_map_prime(st.q_e, S=s_star * (1 + 1e-9), W_bar=W_BAR, C=C, d=d)
    assert below > 0 > above
    assert jou.stability(S=s_star * (1 - 1e-9), W_bar=W_BAR, C=C, d=d).monotone
    assert not jou.stability(S=s_star * (1 + 1e-9), W_bar=W_BAR, C=C, d=d).monotone


def test_paper_monotone_bound_reduces_and_bounds_the_exact_one():
    # Equal delays: the closed form is N*W/C, the RTT at equilibrium.
    assert jou.stability(S=0.1, **c4(20)).s_monotone_paper_bound == pytest.approx(rtt(20), rel=1e-12)
    # Mildly unequal delays: it is finite, at least the exact bound, and S
    # above it gives a negative slope.
    d = np.linspace(0.060, 0.068, 20)
    st = jou.stability(S=0.1, W_bar=W_BAR, C=C, d=d)
    assert st.s_monotone_bound <= st.s_monotone_paper_bound < math.inf
    assert jou.drift_map_prime(st.q_e, S=1.001 * st.s_monotone_paper_bound, W_bar=W_BAR, C=C, d=d) < 0
    # Times do not depend on the unit of data: measuring in bytes (W and C
    # divided by 8) leaves every bound unchanged. The formula as given, with
    # terms in 1/s and 1/bits^2, would change.
    st8 = jou.stability(S=0.1, W_bar=W_BAR / 8, C=C / 8, d=d)
    assert st8.s_monotone_paper_bound == pytest.approx(st.s_monotone_paper_bound, rel=1e-9)
    assert st8.s_monotone_bound == pytest.approx(st.s_monotone_bound, rel=1e-9)
    assert st8.s_gas_bound == pytest.approx(st.s_gas_bound, rel=1e-12)


# Trajectories


@pytest.mark.parametrize("N", [20, 40])
@pytest.mark.parametrize("q0", [0.0, B])
def test_calm_case_s_equal_rtt_converges(N, q0):
    q = jou.trajectory(S=rtt(N), **c4(N), B=B, q0=q0, steps=50)
    assert q[0] == q0
    assert q[-1] == pytest.approx(jou.equilibrium(**c4(N)), rel=1e-12)


@pytest.mark.parametrize("N", [20, 40])
@pytest.mark.parametrize("q0", [0.0, B])
def test_s_twice_rtt_oscillates_without_settling(N, q0):
    # At S = 2 RTT, f'(q_e) = -1. With x = q + d*C = a(1 + u), a = N*W, the
    # map is u -> u(u - 1)/(1 + u) = -u + 2u^2 - 2u^3 + ..., whose second
    # iterate is u -> u - 4u^3: the error changes sign every step and its
    # size decays only like 1/sqrt(4n), so |q[n] - q_e| ~ a/sqrt(4n), not
    # geometrically as it does for S < 2 RTT.
    q_e = jou.equilibrium(**c4(N))
    n = 20000
    e = jou.trajectory(S=2 * rtt(N), **c4(N), B=B, q0=q0, steps=n) - q_e
    assert np.all(e[-101:-1] * e[-100:] < 0)
    assert abs(e[n]) == pytest.approx(N * W_BAR / math.sqrt(4 * n), rel=0.03)
    assert abs(e[n]) > 4000.0  # still half a packet away after 20000 steps


@pytest.mark.parametrize("N", [20, 40])
def test_beyond_twice_rtt_the_fixed_point_repels(N):
    # S = 2.5 RTT: f'(q_e) = -1.5, so the path never comes back near q_e.
    q_e = jou.equilibrium(**c4(N))
    q = jou.trajectory(S=2.5 * rtt(N), **c4(N), B=B, q0=q_e * 1.01, steps=2000)
    assert np.min(np.abs(q[-1000:] - q_e)) > 0.1 * q_e


def test_trajectory_clips_at_zero_and_at_the_buffer():
    # S = 5 RTT at C4 N = 20: from a full buffer, f(B) = B + S*(N*W*C/(B + d*C) - C)
    # = 4e6 - 1.0033 * 4.352e6 < 0, and f(0) = S*(N*W/d - C) = 1.0033 * 1.28e7 > B,
    # so the clipped map alternates exactly between B and 0.
    S = 5 * rtt(20)
    assert B + S * (20 * W_BAR * C / (B + D * C) - C) < 0 < B < S * (20 * W_BAR / D - C)
    q = jou.trajectory(S=S, **c4(20), B=B, q0=B, steps=6)
    assert q.tolist() == [B, 0.0, B, 0.0, B, 0.0, B]


def test_noisy_trajectory_is_reproducible_with_a_seed():
    kw = {"S": rtt(20), **c4(20), "B": B, "q0": 8e5, "steps": 500, "sigma": SIGMA[20]}
    a = jou.trajectory(**kw, seed=7)
    assert np.array_equal(a, jou.trajectory(**kw, seed=7))
    assert not np.array_equal(a, jou.trajectory(**kw, seed=8))
    deterministic = jou.trajectory(**{**kw, "sigma": 0.0}, seed=7)
    assert np.array_equal(deterministic, jou.trajectory(**{**kw, "sigma": 0.0}, seed=8))
    assert np.all((a >= 0) & (a <= B))


def test_noisy_trajectory_has_the_linearised_variance():
    # S = RTT/2 (f'(q_e) = 1/2) at C4 N = 20: the queue's std is ~4e4 bits,
    # 20 std from 0 and B, so the AR(1) variance N S^2 sigma^2/(1 - 1/4)
    # should hold to about the sampling error of 20000 correlated samples
    # (~1.5%); 5% allows for it and the map's curvature.
    S = 0.5 * rtt(20)
    q = jou.trajectory(S=S, **c4(20), B=B, q0=8.2e5, steps=20000, sigma=SIGMA[20], seed=1)
    expected = 20 * S**2 * SIGMA[20] ** 2 / (1 - 0.25)
    assert np.var(q[100:]) == pytest.approx(expected, rel=0.05)


@pytest.mark.parametrize("N", [20, 40])
@pytest.mark.parametrize("S_rtt", [0.5, 1.5])
def test_lyapunov_exponent_of_a_stable_fixed_point_is_log_of_its_slope(N, S_rtt):
    # The path settles at q_e, where |f'| = |1 - S/RTT| = 1/2 for both S.
    lam = jou.lyapunov_exponent(S=S_rtt * rtt(N), **c4(N), B=B, q0=0.5 * jou.equilibrium(**c4(N)), steps=400,
                                skip=200)
    assert lam == pytest.approx(math.log(0.5), abs=1e-9)


def test_lyapunov_exponent_is_marginal_at_twice_rtt_and_minus_inf_when_clipped():
    # S = 2 RTT: |f'(q_e)| = 1 and the path closes in like 1/sqrt(n), so the
    # exponent is just below 0 (the mean of ln(1 - O(1/n)) terms).
    lam = jou.lyapunov_exponent(S=2 * rtt(20), **c4(20), B=B, q0=4e5, steps=20000, skip=2000)
    assert -1e-3 < lam < 0
    # S = 5 RTT alternates between B and 0 (see the clipping test).
    assert jou.lyapunov_exponent(S=5 * rtt(20), **c4(20), B=B, q0=B, steps=10) == -math.inf
    with pytest.raises(ModelError, match="skip"):
        jou.lyapunov_exponent(S=rtt(20), **c4(20), B=B, q0=B, steps=10, skip=10)


# Markov chain and Gaussian approximation


def test_transition_matrix_rows_and_clipped_boundaries():
    # N = 7 flows barely fill the link (q_e = 4.214e5 - 3.84e5 = 37400 bits,
    # under 5 packets) and the buffer is 12.5 packets, so with the noise
    # tripled (std 43000 bits) every row puts mass on both clipped states.
    N, L_, B_ = 7, 8000.0, 1.0e5
    S, sigma = rtt(N), 3 * SIGMA[20]
    T = jou.transition_matrix(S=S, **c4(N), B=B_, sigma=sigma, L=L_)
    M = 12  # floor(1e5 / 8000)
    assert T.shape == (M + 1, M + 1)
    assert np.all(T >= 0)
    assert np.allclose(T.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    sd = math.sqrt(N) * S * sigma
    for i in range(M + 1):
        f = jou.drift_map(i * L_, S=S, **c4(N))
        # State 0 takes everything below L (the clipped mass below 0
        # included), state M everything from M*L up (the mass clipped at B).
        assert T[i, 0] == pytest.approx(phi((L_ - f) / sd), rel=1e-9)
        assert T[i, M] == pytest.approx(phi((f - M * L_) / sd), rel=1e-9)
        assert T[i, 3] == pytest.approx(phi((4 * L_ - f) / sd) - phi((3 * L_ - f) / sd), rel=1e-9)
        assert T[i, 0] > 0.05 and T[i, M] > 0.05


def test_stationary_distribution_is_normalised_and_invariant():
    kw = {"S": rtt(20), **c4(20), "B": B, "sigma": SIGMA[20], "L": L}
    chain = jou.stationary_distribution(**kw)
    T = jou.transition_matrix(**kw)
    assert chain.pi.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.abs(chain.pi @ T - chain.pi).sum() < 1e-12
    assert np.array_equal(chain.q_bits, L * np.arange(501))
    assert chain.mean_bits == pytest.approx(float(chain.pi @ chain.q_bits), rel=1e-12)


def test_small_sigma_puts_the_chain_at_the_equilibrium():
    # sigma = 1000 bits/s: the per-step noise is sqrt(20)*S*sigma = 900
    # bits, below one packet, so the chain sits in q_e's bin; a state is its
    # bin's lower edge, hence within L of q_e.
    chain = jou.stationary_distribution(S=rtt(20), **c4(20), B=B, sigma=1000.0, L=L)
    q_e = jou.equilibrium(**c4(20))
    assert abs(chain.mean_bits - q_e) <= L
    assert chain.var_bits < L**2


@pytest.mark.parametrize(
    "N, S_rtt",
    # Small-noise cases from C4: the Gaussian std is 5.0, 8.6 and 23.5
    # packets (L = 8000 bits, so binning adds ~L^2/12, under 0.5% of the
    # variance) and q_e is 12 to 20 std from 0 and B = 4e6. The map's
    # curvature adds about f''(q_e)^2 var^2/2 (0.7% for N = 20 at S = RTT).
    [(20, 0.5), (20, 1.0), (40, 0.5)],
)
def test_gaussian_variance_matches_the_markov_chain(N, S_rtt):
    S = S_rtt * rtt(N)
    chain = jou.stationary_distribution(S=S, **c4(N), B=B, sigma=SIGMA[N], L=L)
    gauss = jou.gaussian_approximation(S=S, **c4(N), sigma=SIGMA[N])
    f_prime = 1 - S_rtt
    assert gauss.mean_bits == jou.equilibrium(**c4(N))
    assert gauss.var_q_over_S == pytest.approx(N * SIGMA[N] ** 2 / (1 - f_prime**2), rel=1e-12)
    assert gauss.var_bits == pytest.approx(S**2 * gauss.var_q_over_S, rel=1e-12)
    assert chain.var_bits == pytest.approx(gauss.var_bits, rel=0.05)
    # The chain's mean is q_e less about half a bin (states are lower edges).
    assert abs(chain.mean_bits - gauss.mean_bits) < 2 * L


@pytest.mark.parametrize("S_rtt", [2.0, 2.5])
def test_gaussian_approximation_needs_a_slope_inside_the_unit_interval(S_rtt):
    with pytest.raises(ModelError, match=r"\|f'\(q_e\)\|"):
        jou.gaussian_approximation(S=S_rtt * rtt(20), **c4(20), sigma=SIGMA[20])


# Command line


def test_lindley_cli_defaults_are_c4_at_s_equal_rtt():
    model = MODELS["lindley"]
    assert [p.name for p in model.params] == ["N", "W_bar", "C", "d", "S", "B", "sigma", "L"]
    started = time.perf_counter()
    out = model.compute(**{p.name: p.default for p in model.params})
    assert time.perf_counter() - started < 1.0
    assert out["S"] == pytest.approx(rtt(20), rel=1e-12)
    assert out["q_e"] == pytest.approx(8.2e5, rel=1e-12)
    assert out["f_prime"] == 0.0 and out["monotone"] is True and out["gas"] is False
    assert out["s_monotone_bound"] == pytest.approx(rtt(20), rel=1e-12)
    assert out["gauss_mean"] == out["q_e"]
    assert out["gauss_var"] == pytest.approx(20 * rtt(20) ** 2 * SIGMA[20] ** 2, rel=1e-12)
    assert out["var"] == pytest.approx(out["gauss_var"], rel=0.05)
    assert len(out["q_bits"]) == len(out["distribution"]) > 10
    assert sum(out["distribution"]) == pytest.approx(1.0, abs=1e-9)


def test_lindley_cli_reports_no_gaussian_at_twice_rtt():
    out = jou.lindley(N=20, W_bar=W_BAR, C=C, d=D, S=2 * rtt(20), B=B, sigma=SIGMA[20], L=L)
    assert out["f_prime"] == pytest.approx(-1.0, abs=1e-12)
    assert math.isnan(out["gauss_mean"]) and math.isnan(out["gauss_var"])
    assert sum(out["distribution"]) == pytest.approx(1.0, abs=1e-9)
