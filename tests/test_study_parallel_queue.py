"""Study C (parallel-queue): the whole study at smoke scale, its CSVs against
the study's column and scheme names, the model columns against the closed
forms of Jou, Tan and Baras's queue-dynamics model, and the random-drop runs against binomial statistics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from aqmlab.models import jou
from aqmlab.studies import STUDIES, reproduce
from aqmlab.studies.parallel_queue import SCALES, SIGMA_BPS

CI = ["ci95_low", "ci95_high"]


def with_ci(*metrics: str) -> list[str]:
    return [c for m in metrics for c in (m, f"{m}_ci95_low", f"{m}_ci95_high")]


CSVS = {
    "c1_summary": ["thresholds", *with_ci("loss_rate", "loss_rate_n20", "loss_rate_n40", "qdelay_mean_s", "utilization",
                                          "goodput_bps", "goodput_bps_late", "jain"), "n"],
    "c2_classes": ["thresholds", "class", *with_ci("loss_rate", "delay_mean_s", "qdelay_mean_s", "goodput_bps"), "n"],
    "c2_delivery": ["scheme", "thresholds", *with_ci("small_mean_s", "small_std_s", "small_count", "responses_mean_s",
                                                     "responses_std_s", "responses_count", "ftp_goodput_bps",
                                                     "cbr_loss_rate"), "n"],
    "c2_small_files": ["scheme", "thresholds", "size_pkts", "delivery_mean_s", *CI, "n"],
    "c3_delivery": ["P_d", "size_KB", *with_ci("transfer_mean_s", "loss_rate", "transfers", "coverage"), "n"],
    "c4_model": ["N", "sigma_bps", "S_rtt", "S_s", "q_e_bits", "f_prime", "gas", "chain_mean_bits", "chain_std_bits",
                 "chain_p_full", "gauss_mean_bits", "gauss_std_bits", "gauss_std_rel_diff", "sim_mean_bits", "sim_ci95_low",
                 "sim_ci95_high", "sim_std_bits", "n"],
    "c4_map": ["N", "S_rtt", "q_bits", "f_bits"],
    "c4_trajectories": ["N", "S_rtt", "step", "time_s", "q_bits"],
    "c4_distribution": ["N", "S_rtt", "q_bits", "pi_chain", "p_gauss"],
    "c4_histogram": ["N", "q_bits", "p_sim"],
    "c4_lyapunov": ["N", "S_rtt", "lyapunov_per_step", "q_min_over_q_e", "q_max_over_q_e", "chaotic"],
    "c4_flow_rate": ["N", "model_rate_bps", "sigma_paper_bps", *with_ci("rate_mean_bps", "sigma_sim_bps"), "n"],
    "c4_noisy_trajectory": ["S_rtt", "N", "time_s", "q_bits"],
}
FIGURES = ["c1_timeseries", "c2_delivery", "c2_small_files", "c3_delivery", "c4_map", "c4_model", "c4_noise"]
SMOKE = SCALES["smoke"]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("parallel_queue")
    reproduce("parallel-queue", "smoke", folder, jobs=2)
    return folder


def csv(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / f"{name}.csv")


def test_registered() -> None:
    study = STUDIES["parallel-queue"]
    assert set(study.runtime) == {"smoke", "quick", "full"}
    assert set(study.experiments("full")) == {"c1-ared-thresholds", "c2-red-tail", "c3-file-delay"}


def test_report_and_files(out: Path) -> None:
    page = (out / "report.html").read_text()
    assert "SMOKE scale" in page
    for name, columns in CSVS.items():
        assert list(csv(out, name).columns) == columns, name
    for name in FIGURES:
        assert (out / f"{name}.png").stat().st_size > 10_000
        assert (out / f"{name}.svg").exists()
        assert f'id="{name}"' in page
    for name in ("c1-ared-thresholds", "c2-red-tail", "c3-file-delay"):
        assert (out / "experiments" / f"{name}.toml").exists()


def test_row_labels_and_ranges(out: Path) -> None:
    c1 = csv(out, "c1_summary")
    assert list(c1["thresholds"]) == ["fixed", "dynamic"]
    assert c1["loss_rate"].between(0, 1).all() and c1["utilization"].between(0.5, 1).all()
    assert (c1["goodput_bps"] > 0).all() and (c1["qdelay_mean_s"] > 0).all()
    assert (c1["n"] == SMOKE["c1"]["replications"]).all()

    c2 = csv(out, "c2_classes")
    assert list(zip(c2["thresholds"], c2["class"])) == [(t, c) for t in ("fixed", "dynamic")
                                                         for c in ("FTP", "WEB", "CBR")]
    assert c2["loss_rate"].between(0, 1).all() and (c2["delay_mean_s"] > 0).all()
    # One-way delay is propagation plus queueing: removing the propagation leaves a smaller, positive delay.
    assert (c2["qdelay_mean_s"] < c2["delay_mean_s"]).all() and (c2["qdelay_mean_s"] > 0).all()
    # CBR sends 1 KB every 50 ms: it cannot deliver more than 160 kb/s.
    assert (c2[c2["class"] == "CBR"]["goodput_bps"] <= 160_000 + 1e-6).all()

    d = csv(out, "c2_delivery")
    assert list(zip(d["scheme"], d["thresholds"])) == [
        ("DropTail", "-"), ("Adaptive RED", "fixed"), ("Adaptive RED", "dynamic"),
        ("RED+Tail", "fixed"), ("RED+Tail", "dynamic")]
    assert (d["responses_mean_s"] > 0).all() and (d["responses_count"] > 0).all()
    # Responses are Pareto (K = 2.3 KB, alpha = 1.3) in whole 1000 B packets,
    # so P(at most 30 packets) = 1 - (2.3/30)^1.3 = 0.9649; per scheme the
    # small ones' share is binomial about it (4 standard deviations, and
    # 0.005 for the responses under way at the end, more often large ones).
    p = 1 - (2.3 / 30) ** 1.3
    for small, count in zip(d["small_count"], d["responses_count"]):
        n = count * SMOKE["c2"]["replications"]
        assert abs(small / count - p) < 4 * math.sqrt(p * (1 - p) / n) + 0.005
    small = csv(out, "c2_small_files")
    assert small["size_pkts"].between(3, 30).all()  # 2.3 KB rounds up to 3 packets

    c3 = csv(out, "c3_delivery")
    assert sorted(set(c3["P_d"])) == SMOKE["c3"]["p"]
    assert sorted(set(c3["size_KB"])) == SMOKE["c3"]["sizes_kb"]
    assert (c3["transfer_mean_s"] > 0).all() and c3["coverage"].between(0.5, 1.05).all()
    # Without drops the larger file takes longer.
    lossless = c3[c3["P_d"] == 0].set_index("size_KB")["transfer_mean_s"]
    assert lossless[210] > lossless[30]


def test_small_files_pool_the_rows_up_to_30_packets() -> None:
    from aqmlab.exceptions import AqmlabError
    from aqmlab.studies.parallel_queue import _small_files

    # Times {1, 1} s at 3 packets and {2, 4} s at 10 (mean 3, std 1); the
    # 40-packet row is not small. Pooled: mean 2, variance (1+1+0+4)/4 = 1.5.
    rows = [{"pkts": 3, "count": 2, "mean_s": 1.0, "std_s": 0.0}, {"pkts": 10, "count": 2, "mean_s": 3.0, "std_s": 1.0},
            {"pkts": 40, "count": 1, "mean_s": 50.0, "std_s": 0.0}]
    got = _small_files({"traffic": {"web": {"responses_by_size": rows}}})
    assert got["count"] == 4 and got["mean_s"] == 2.0 and got["std_s"] == pytest.approx(math.sqrt(1.5), rel=1e-12)
    with pytest.raises(AqmlabError, match=r"responses_by_size.*--rerun"):
        _small_files({"traffic": {"web": {"responses": {}}}})


def test_c3_drop_rate_is_the_configured_probability(out: Path) -> None:
    """Every arrival at the Bernoulli queue is dropped with probability P_d,
    so over all replications drops ~ Binomial(arrivals, P_d)."""
    with duckdb.connect(str(out / "results.duckdb"), read_only=True) as db:
        rows = db.execute("SELECT labels, summary FROM runs WHERE experiment = 'c3-file-delay' AND status = 'ok'"
                          ).fetchall()
    totals: dict[float, list[int]] = {}
    for labels, summary in rows:
        p = float(json.loads(labels)["topology.qdisc.p"])
        q = json.loads(summary)["queues"]["bottleneck"]
        t = totals.setdefault(p, [0, 0])
        t[0] += q["arrivals"]
        t[1] += q["drops"]
    assert set(totals) == set(SMOKE["c3"]["p"])
    for p, (arrivals, drops) in totals.items():
        assert arrivals > 100
        if p == 0:
            assert drops == 0
        else:
            assert abs(drops / arrivals - p) < 4 * math.sqrt(p * (1 - p) / arrivals)


def test_c4_model_columns(out: Path) -> None:
    m = csv(out, "c4_model")
    assert sorted(set(m["N"])) == [20, 40] and sorted(set(m["S_rtt"])) == [0.5, 1.0, 2.0]
    for _, r in m.iterrows():
        N = int(r["N"])
        assert r["sigma_bps"] == SIGMA_BPS[N]
        # Homogeneous: q_e = N W_bar - d C, and the round trip at
        # equilibrium is N W_bar / C, so f'(q_e) = 1 - S / RTT.
        # (The CSVs keep 6 significant digits.)
        assert r["q_e_bits"] == pytest.approx(N * 6.02e4 - 0.064 * 6e6, rel=1e-6)
        assert r["S_s"] == pytest.approx(r["S_rtt"] * N * 6.02e4 / 6e6, rel=1e-5)
        assert r["f_prime"] == pytest.approx(1 - r["S_rtt"], abs=1e-5)
        if r["S_rtt"] < 2:
            assert r["gauss_mean_bits"] == pytest.approx(r["q_e_bits"])
            # Var(q) = S^2 N sigma^2 / (1 - f'^2).
            var = r["S_s"] ** 2 * N * r["sigma_bps"] ** 2 / (1 - r["f_prime"] ** 2)
            assert r["gauss_std_bits"] == pytest.approx(math.sqrt(var), rel=1e-4)
        else:
            assert math.isnan(r["gauss_std_bits"])
    dist = csv(out, "c4_distribution")
    sums = dist.groupby(["N", "S_rtt"])["pi_chain"].sum()
    assert np.allclose(sums, 1.0, atol=1e-4)
    hist = csv(out, "c4_histogram")
    assert np.allclose(hist.groupby("N")["p_sim"].sum(), 1.0, atol=1e-4)
    # The map's values are the model's, for every S.
    mp = csv(out, "c4_map")
    assert sorted(set(mp["S_rtt"])) == [0.5, 1.0, 2.0]
    for _, r in mp.iloc[::50].iterrows():
        N = int(r["N"])
        S = r["S_rtt"] * N * 6.02e4 / 6e6
        f = jou.drift_map(r["q_bits"], S=S, W_bar=6.02e4, C=6e6, d=jou.delays(N, 0.064))
        assert r["f_bits"] == pytest.approx(min(max(f, 0.0), 500 * 1040 * 8), rel=1e-5, abs=1e-3)


def test_c4_noise_and_lyapunov(out: Path) -> None:
    lyap = csv(out, "c4_lyapunov").set_index(["N", "S_rtt"])["lyapunov_per_step"]
    for N in (20, 40):
        # Paths settle on q_e, where |f'| = |1 - S/RTT|: ln 0.5 at 0.5 and 1.5 RTT.
        assert lyap[(N, 0.5)] == pytest.approx(math.log(0.5), abs=1e-6)
        assert lyap[(N, 1.5)] == pytest.approx(math.log(0.5), abs=1e-6)
        assert -1e-2 < lyap[(N, 2.0)] < 0
    noisy = csv(out, "c4_noisy_trajectory")
    c1 = SMOKE["c1"]
    assert noisy["time_s"].min() == 0 and noisy["time_s"].max() == pytest.approx(c1["duration_s"], abs=1.0)
    assert list(noisy.groupby("S_rtt")["N"].max()) == [40, 40]
    rate = csv(out, "c4_flow_rate").set_index("N")
    assert list(rate["sigma_paper_bps"]) == [77021.0, 128490.0]
    # One flow of N sharing 6 Mb/s: its mean rate is near C/N (within a factor 2 at smoke scale).
    for N in (20, 40):
        assert 0.5 < rate.loc[N, "rate_mean_bps"] / (6e6 / N) < 2


def test_claims_table_has_the_papers_table_i(out: Path) -> None:
    """The claims: C1's drop probabilities, delay and utilisation, every cell
    of the paper's Table I, and its four effects, each with a verdict."""
    from aqmlab.studies.framework import VERDICTS

    claims = csv(out, "claims")
    assert set(claims["verdict"]) <= set(VERDICTS)
    table_i = claims[claims["claim"].str.startswith("Table I, ")]
    assert len(table_i) == 18   # 2 threshold settings x 3 classes x loss, delay, rate
    ftp_fixed_loss = table_i[table_i["claim"] == "Table I, fixed thresholds, FTP loss"]
    assert list(ftp_fixed_loss["paper"]) == ["2.747%"]
    assert claims["claim"].str.startswith("C1: ").sum() == 4
    model = claims[claims["claim"].str.startswith("Model: ")].set_index("paper")["verdict"]
    # S = RTT: f'(q_e) = 0, the path lands on q_e; S = 2 RTT: f'(q_e) = -1, marginal, no chaos.
    assert dict(model) == {"stable": "reproduced", "chaotic": "not reproduced"}


def test_report_needs_no_sideways_scrolling_at_1280_px(out, tmp_path):
    from conftest import chromium, scroll_width

    if chromium() is None:
        pytest.skip("no Chromium on this machine (./dev setup installs it on Debian)")
    assert scroll_width(out / "report.html", tmp_path) <= 1280
