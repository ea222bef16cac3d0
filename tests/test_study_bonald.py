"""Study B (bonald): the whole study at smoke scale, its CSVs against the
study's column names and scheme names, and the model columns against
aqmlab.models and the closed forms of Bonald et al."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from aqmlab import models
from aqmlab.experiment import Experiment
from aqmlab.studies import STUDIES, reproduce
from aqmlab.studies.bonald import SCALES

CSVS = {
    "b1_drop_probability": ["scheme", "B", "load", "loss_rate", "ci95_low", "ci95_high", "n", "model",
                            "model_sequential"],
    "b2_drop_probability": ["bursts", "scheme", "stream", "load", "bursty_fraction", "loss_rate", "ci95_low",
                            "ci95_high", "n", "model"],
    "b3_loss_runs": ["scheme", "consecutive_loss_mean", "consecutive_loss_mean_ci95_low",
                     "consecutive_loss_mean_ci95_high", "consecutive_loss_var", "consecutive_loss_var_ci95_low",
                     "consecutive_loss_var_ci95_high", "n", "model_mean", "model_var", "approx2_mean", "approx2_var"],
    "b3_loss_run_distribution": ["scheme", "run_length", "probability", "runs", "model", "approx2"],
    "b4_queue_size": ["scheme", "qlen_mean_pkts", "qlen_mean_pkts_ci95_low", "qlen_mean_pkts_ci95_high",
                      "qlen_var_pkts", "qlen_var_pkts_ci95_low", "qlen_var_pkts_ci95_high", "system_mean_pkts",
                      "system_mean_pkts_ci95_low", "system_mean_pkts_ci95_high", "qdelay_mean_s",
                      "qdelay_mean_s_ci95_low", "qdelay_mean_s_ci95_high", "n", "model_mean", "model_var",
                      "model_system_mean", "model_qdelay_s"],
    "b4_queue_distribution": ["scheme", "backlog_pkts", "probability", "model"],
    "b5_tcp_udp": ["scheme", "traffic", "loss_rate", "loss_rate_ci95_low", "loss_rate_ci95_high", "goodput_bps",
                   "goodput_bps_ci95_low", "goodput_bps_ci95_high", "n"],
    "b6_queueing_delay": ["scheme", "buffer_pkts", "qdelay_mean_s", "qdelay_mean_s_ci95_low",
                          "qdelay_mean_s_ci95_high", "qdelay_std_s", "qdelay_std_s_ci95_low", "qdelay_std_s_ci95_high",
                          "loss_rate", "loss_rate_ci95_low", "loss_rate_ci95_high", "goodput_bps",
                          "goodput_bps_ci95_low", "goodput_bps_ci95_high", "n"],
    "b7_against_flows": ["scheme", "flows", "traffic", "loss_rate", "loss_rate_ci95_low", "loss_rate_ci95_high",
                         "goodput_bps", "goodput_bps_ci95_low", "goodput_bps_ci95_high", "n"],
    "b8_queue": ["scheme", "flows", "qlen_mean_pkts", "qlen_mean_pkts_ci95_low", "qlen_mean_pkts_ci95_high",
                 "qlen_var_pkts", "qlen_var_pkts_ci95_low", "qlen_var_pkts_ci95_high", "loss_rate",
                 "loss_rate_ci95_low", "loss_rate_ci95_high", "n"],
}
FIGURES = ["b1_drop_probability", "b2_fraction", "b2_load", "b3_loss_runs", "b4_queue_distribution",
           "b6_queueing_delay", "b7_against_flows", "b8_queue"]
SMOKE = SCALES["smoke"]
REPS = SMOKE["open"]["reps"]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bonald")
    reproduce("bonald", "smoke", folder, jobs=2)
    return folder


def csv(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / f"{name}.csv")


def open_queue(out: Path, experiment: str) -> dict:
    """The queue's limit and the swept disciplines, as the experiment file
    that ran says."""
    data = tomllib.loads((out / "experiments" / f"{experiment}.toml").read_text())
    sweep = data["sweep"]["topology.links[0].qdisc"]
    return {"limit": int(data["scenario"]["topology"]["links"][0]["qdisc"]["limit"].removesuffix("pkt")),
            "qdiscs": dict(zip(sweep["labels"], sweep["values"]))}


def red_of(qdisc: dict) -> models.Red | None:
    if qdisc["kind"] == "droptail":
        return None
    pk = lambda v: float(v.removesuffix("pkt"))  # noqa: E731
    return models.Red(pk(qdisc["min_th"]), pk(qdisc["max_th"]), qdisc["max_p"])


def test_report_csvs_and_figures_exist(out: Path) -> None:
    assert (out / "report.html").stat().st_size > 10_000
    for name, columns in CSVS.items():
        assert list(csv(out, name).columns) == columns, name
    for name in FIGURES:
        assert (out / f"{name}.png").stat().st_size > 1000
        assert (out / f"{name}.svg").exists()
    for name in STUDIES["bonald"].experiments("smoke"):
        Experiment.load(out / "experiments" / f"{name}.toml")


def test_rows_are_labelled_with_the_schemes(out: Path) -> None:
    b1 = csv(out, "b1_drop_probability")
    assert set(b1["scheme"]) == {"TD", "RED ex1"}
    assert sorted(set(b1["B"])) == SMOKE["batches"] and sorted(set(b1["load"])) == SMOKE["loads"]
    b2 = csv(out, "b2_drop_probability")
    assert set(b2["scheme"]) == {"TD", "RED ex2"}
    assert set(b2["stream"]) == {"bursty", "smooth"} and set(b2["bursts"]) == {"Poisson", "Pareto"}
    assert set(csv(out, "b3_loss_runs")["scheme"]) == {"TD", "RED ex1", "RED ex2", "RED ex2 w_q=0.1",
                                                       "RED ex2 w_q=0.01", "RED ex2 w_q=0.001"}
    assert set(csv(out, "b4_queue_size")["scheme"]) == {"TD", "RED ex1", "RED ex2"}
    b5 = csv(out, "b5_tcp_udp")
    assert set(zip(b5["scheme"], b5["traffic"])) == {(s, t) for s in ("TD", "RED") for t in ("TCP", "UDP")}
    b6 = csv(out, "b6_queueing_delay")
    assert set(zip(b6["scheme"], b6["buffer_pkts"])) == {(s, b) for s in ("TD", "RED") for b in (40, 150)}
    assert sorted(set(csv(out, "b7_against_flows")["flows"])) == SMOKE["flows"]
    assert sorted(csv(out, "b8_queue")["flows"]) == SMOKE["b8_flows"]


def test_values_in_range(out: Path) -> None:
    for name in ("b1_drop_probability", "b2_drop_probability", "b5_tcp_udp", "b7_against_flows", "b8_queue"):
        df = csv(out, name)
        assert df["loss_rate"].between(0, 1).all(), name
        assert (df["n"] == REPS).all(), name
    for name in ("b1_drop_probability", "b2_drop_probability"):
        df = csv(out, name)
        assert (df["ci95_low"] <= df["loss_rate"] + 1e-12).all() and (df["loss_rate"] <= df["ci95_high"] + 1e-12).all()
    tcp = csv(out, "b7_against_flows").query("traffic == 'TCP'")
    assert tcp["goodput_bps"].between(1e6, 10e6).all()
    for name in ("b3_loss_run_distribution", "b4_queue_distribution"):
        df = csv(out, name)
        for _, g in df.groupby("scheme"):
            assert g["probability"].sum() == pytest.approx(1.0, abs=1e-4)
    b4 = csv(out, "b4_queue_size")
    assert b4["qlen_mean_pkts"].between(0, 40).all()


def test_b1_model_is_the_chain_of_the_queue_that_ran(out: Path) -> None:
    """The model column is Bonald's batch chain for the queue the experiment
    file describes: K = limit + 1 in the system, d at the backlog behind the
    packet in service; with B = 1 under Tail Drop, the M/M/1/K loss."""
    queue = open_queue(out, "b1")
    K = queue["limit"] + 1
    assert K == 41
    for _, r in csv(out, "b1_drop_probability").iterrows():
        red = red_of(queue["qdiscs"][r["scheme"]])
        want = models.drop_probability(r["load"], K, int(r["B"]), red, count_arrival=False, count_in_service=False)
        assert r["model"] == pytest.approx(float(want), rel=1e-5)
        if red is None or r["B"] == 1:
            assert r["model_sequential"] == pytest.approx(r["model"], rel=1e-5)
        if red is None and r["B"] == 1:
            rho = r["load"]
            mm1k = 1 / (K + 1) if rho == 1 else rho**K * (1 - rho) / (1 - rho ** (K + 1))
            assert r["model"] == pytest.approx(mm1k, rel=1e-5)


def test_b2_model_is_the_mix_chain(out: Path) -> None:
    queue = open_queue(out, "b2_poisson")
    df = csv(out, "b2_drop_probability")
    pois = df[df["bursts"] == "Poisson"]
    assert pois["model"].notna().all() and df[df["bursts"] == "Pareto"]["model"].isna().all()
    for _, r in pois.iterrows():
        pb, ps = models.mix_drop_probability(r["load"], r["bursty_fraction"], queue["limit"] + 1, 3,
                                             red_of(queue["qdiscs"][r["scheme"]]), count_arrival=False,
                                             count_in_service=False)
        assert r["model"] == pytest.approx(pb if r["stream"] == "bursty" else ps, rel=1e-5)


def test_b3_b4_models_and_simulation_agree_with_closed_forms(out: Path) -> None:
    runs = csv(out, "b3_loss_runs").set_index("scheme")
    # Tail Drop with Poisson input at load 2: geometric runs, mean rho + 1, variance rho (rho + 1).
    assert runs.loc["TD", "model_mean"] == pytest.approx(3.0) and runs.loc["TD", "model_var"] == pytest.approx(6.0)
    exact = models.consecutive_drops_red(2.0, 41, models.Red(20, 40, 1.0), method="exact", count_arrival=False,
                                         count_in_service=False)
    assert runs.loc["RED ex1", "model_mean"] == pytest.approx(exact.mean, rel=1e-5)
    dist = csv(out, "b3_loss_run_distribution").query("scheme == 'TD'")
    assert dist["model"].to_numpy()[:5] == pytest.approx([(1 / 3) * (2 / 3) ** (n - 1) for n in range(1, 6)], rel=1e-5)
    # The truncated geometric queue of Tail Drop at load 2, K = 41 in the system.
    k = np.arange(42)
    pi = 2.0**k / (2.0**k).sum()
    size = csv(out, "b4_queue_size").set_index("scheme")
    assert size.loc["TD", "model_system_mean"] == pytest.approx(float(k @ pi), rel=1e-5)
    assert size.loc["TD", "model_mean"] == pytest.approx(float(np.maximum(k - 1, 0) @ pi), rel=1e-5)
    # Even 20 s of simulation pins Tail Drop's full queue at load 2.
    assert size.loc["TD", "qlen_mean_pkts"] == pytest.approx(size.loc["TD", "model_mean"], abs=0.5)
    td_wait = size.loc["TD", "model_mean"] / (2.0 * 1250 * 0.5)  # Little: accepted rate mu
    assert size.loc["TD", "model_qdelay_s"] == pytest.approx(td_wait, rel=1e-3)
    qd = csv(out, "b4_queue_distribution").query("scheme == 'TD'")
    assert qd["model"].to_numpy()[1:] == pytest.approx(pi[2:], rel=1e-5)


@pytest.mark.parametrize("scale", ["quick", "full"])
def test_every_scale_makes_valid_experiments(scale: str) -> None:
    texts = STUDIES["bonald"].experiments(scale)
    assert set(texts) == {"b1", "b2_poisson", "b2_pareto", "b34", "b57", "b6", "b8"}
    for name, text in texts.items():
        exp = Experiment.from_toml(text, source=name)
        assert exp.name == name and exp.replications == SCALES[scale][
            "closed" if name in ("b57", "b6", "b8") else "open"]["reps"]
        assert "Chosen" in text
    b1 = tomllib.loads(texts["b1"])
    assert [float(x) for x in b1["sweep"]["traffic[0].rate"]["labels"]] == pytest.approx(SCALES[scale]["loads"])


def test_claims_table_puts_the_papers_tables_beside_aqmlabs(out):
    """The model tables are exact computations: the loss-run chain under
    Tail Drop is geometric (mean rho + 1 = 3, variance rho (rho + 1) = 6) and
    the queue chains give the paper's Table III (39.0 / 2.0 and 29.0 / 10.0)
    with its K = 40 and conventions."""
    from aqmlab.studies.framework import VERDICTS

    claims = pd.read_csv(out / "claims.csv").set_index("claim")
    assert set(claims["verdict"]) <= set(VERDICTS)
    assert claims.loc["Table I (model): consecutive drops under TD, mean and variance", "aqmlab"] == "3 / 6"
    for scheme in ("TD", "RED ex1"):
        assert claims.loc[f"Table III (model): queue size under {scheme}, mean and variance", "verdict"] == "reproduced"
    assert any(c.startswith("Table V: ") for c in claims.index)


def test_report_needs_no_sideways_scrolling_at_1280_px(out, tmp_path):
    from conftest import chromium, scroll_width

    if chromium() is None:
        pytest.skip("no Chromium on this machine (./dev setup installs it on Debian)")
    assert scroll_width(out / "report.html", tmp_path) <= 1280
