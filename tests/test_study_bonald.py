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

DELAY = ["delay_mean_s", "delay_mean_s_ci95_low", "delay_mean_s_ci95_high", "jitter_s", "jitter_s_ci95_low",
         "jitter_s_ci95_high"]
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
                   "goodput_bps_ci95_low", "goodput_bps_ci95_high", *DELAY, "n"],
    "b5_sensitivity": ["axis", "setting", "scheme", "goodput_bps", "goodput_bps_ci95_low", "goodput_bps_ci95_high",
                       "tcp_loss", "tcp_loss_ci95_low", "tcp_loss_ci95_high", "udp_loss", "udp_loss_ci95_low",
                       "udp_loss_ci95_high", "utilization", "utilization_ci95_low", "utilization_ci95_high", "n",
                       "paper_goodput_bps", "near_paper", "paper_text"],
    "b6_queueing_delay": ["scheme", "buffer_pkts", "qdelay_mean_s", "qdelay_mean_s_ci95_low",
                          "qdelay_mean_s_ci95_high", "qdelay_std_s", "qdelay_std_s_ci95_low", "qdelay_std_s_ci95_high",
                          "loss_rate", "loss_rate_ci95_low", "loss_rate_ci95_high", "goodput_bps",
                          "goodput_bps_ci95_low", "goodput_bps_ci95_high", *("udp_" + c for c in DELAY), "n"],
    "b7_against_flows": ["scheme", "flows", "traffic", "loss_rate", "loss_rate_ci95_low", "loss_rate_ci95_high",
                         "goodput_bps", "goodput_bps_ci95_low", "goodput_bps_ci95_high", *DELAY, "n"],
    "b8_queue": ["scheme", "flows", "qlen_mean_pkts", "qlen_mean_pkts_ci95_low", "qlen_mean_pkts_ci95_high",
                 "qlen_var_pkts", "qlen_var_pkts_ci95_low", "qlen_var_pkts_ci95_high", "loss_rate",
                 "loss_rate_ci95_low", "loss_rate_ci95_high", "goodput_bps", "goodput_bps_ci95_low",
                 "goodput_bps_ci95_high", "n"],
}
FIGURES = ["b1_drop_probability", "b2_fraction", "b2_load", "b3_loss_runs", "b4_queue_distribution",
           "b5_sensitivity", "b6_queueing_delay", "b7_against_flows", "b8_queue"]
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
    b8 = csv(out, "b8_queue")
    assert sorted(zip(b8["scheme"], b8["flows"])) == sorted((s, n) for s in ("TD", "RED") for n in SMOKE["b8_flows"])


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
    assert set(texts) == {"b1", "b2_poisson", "b2_pareto", "b34", "b57", "b6", "b8", "b5_buffer", "b5_rtt", "b5_tcp",
                          "b5_pkt"}
    for name, text in texts.items():
        exp = Experiment.from_toml(text, source=name)
        assert exp.name == name and exp.replications == SCALES[scale][
            "open" if name in ("b1", "b2_poisson", "b2_pareto", "b34") else "closed"]["reps"]
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


def _flat(d: dict, prefix: str = "") -> dict:
    """A scenario as {key path: leaf value}, lists of tables kept whole."""
    out = {}
    for k, v in d.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            out |= _flat(v, path + ".")
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v) and k == "traffic":
            for i, x in enumerate(v):
                out |= _flat(x, f"{path}[{i}].")
        else:
            out[path] = v
    return out


def test_b5_sensitivity_changes_one_thing_each_from_table_vs_setting() -> None:
    """Every point of the b5_* experiments is b57's scenario at 100 flows
    with the same discipline, except for the one setting it is about."""
    texts = STUDIES["bonald"].experiments("quick")
    b57 = {(r.point.labels()["topology.qdisc"], r.point.labels()["traffic[0].count"]): r.scenario
           for r in Experiment.from_toml(texts["b57"], source="b57").runs() if r.replication == 0}
    allowed = {"b5_buffer": ("topology.qdisc.",), "b5_rtt": ("topology.senders",), "b5_tcp": ("traffic[0].tcp.",),
               "b5_pkt": ("traffic[0].packet_size", "traffic[1].size")}
    for name, prefixes in allowed.items():
        runs = [r for r in Experiment.from_toml(texts[name], source=name).runs() if r.replication == 0]
        assert len(runs) >= 4, name
        for r in runs:
            scheme = r.point.labels()["topology.qdisc"].split()[0]
            base = _flat(b57[(scheme, "100")].to_dict())
            mine = _flat(r.scenario.to_dict())
            changed = {k for k in base.keys() | mine.keys() if base.get(k) != mine.get(k)} - {"name"}
            assert changed and all(k.startswith(prefixes) for k in changed), (name, r.point.labels(), changed)
            if name == "b5_pkt":
                assert changed == set(prefixes)
    rtt = tomllib.loads(texts["b5_rtt"])["sweep"]["topology.senders"]
    spread = dict(zip(rtt["labels"], rtt["values"]))["spread"]
    ms = [float(h["delay"].removesuffix("us")) / 1000 for h in spread]
    # One host per flow, round trips 2 (access + 50 ms) evenly from 120 to 220 ms.
    assert len(ms) == 100 and 2 * (ms[0] + 50) == pytest.approx(120) and 2 * (ms[-1] + 50) == pytest.approx(220)
    assert np.diff(ms) == pytest.approx(np.full(99, 50 / 99), abs=1e-3)


def test_b5_sensitivity_table(out: Path) -> None:
    df = csv(out, "b5_sensitivity")
    assert df["axis"].iloc[0] == "default" and set(df["scheme"]) == {"TD", "RED"}
    assert set(df["axis"]) == {"default", "flows", "buffer", "round trips", "TCP", "packet size"}
    assert set(df[df["axis"] == "buffer"]["setting"]) == {"20 packets", "80 packets", "150 packets"}
    assert set(df[df["axis"] == "flows"]["setting"]) == {f"{n} flows" for n in SMOKE["flows"] if n != 100}
    assert (df["n"] == REPS).all()
    # The paper's Table V goodput, and the rule "95% interval within 15% of it".
    assert set(zip(df["scheme"], df["paper_goodput_bps"])) == {("TD", 5.55e6), ("RED", 5.56e6)}
    for _, r in df.iterrows():
        lo, hi, p = r["goodput_bps_ci95_low"], r["goodput_bps_ci95_high"], r["paper_goodput_bps"]
        want = ("reproduced" if 0.85 * p <= lo and hi <= 1.15 * p else
                "not reproduced" if hi < 0.85 * p or lo > 1.15 * p else "inconclusive")
        assert r["near_paper"] == want
    # The default rows are b5_tcp_udp's TCP rows.
    b5 = csv(out, "b5_tcp_udp").query("traffic == 'TCP'").set_index("scheme")
    for _, r in df[df["axis"] == "default"].iterrows():
        assert r["goodput_bps"] == pytest.approx(b5.loc[r["scheme"], "goodput_bps"], rel=1e-5)
    assert df.set_index(["axis", "setting"]).loc[("TCP", "SACK"), "paper_text"].str.startswith("no").all()


def test_udp_delay_and_jitter_within_what_the_path_allows(out: Path) -> None:
    """The CBR source sits on the 120 ms host: 60 ms of one-way propagation
    and 0.08 + 0.8 ms of transmission (1000 B at 100 and 10 Mb/s, ahead of
    it on the bottleneck at most `buffer` TCP packets of 1040 B, 0.832 ms
    each). So its delay lies in [60.88 ms, 60.88 ms + buffer x 0.832 ms] and
    its jitter (a standard deviation of values in an interval of that
    width) is at most half the width."""
    base = 0.060 + 8000 / 100e6 + 8000 / 10e6
    per_pkt = 1040 * 8 / 10e6
    rows = [(r["delay_mean_s"], r["jitter_s"], 40) for _, r in csv(out, "b5_tcp_udp").query("traffic == 'UDP'")
            .iterrows()]
    rows += [(r["udp_delay_mean_s"], r["udp_jitter_s"], r["buffer_pkts"]) for _, r in
             csv(out, "b6_queueing_delay").iterrows()]
    for delay, jitter, buffer in rows:
        assert base - 1e-6 <= delay <= base + buffer * per_pkt + 1e-6
        assert 0 < jitter <= buffer * per_pkt / 2
    b7 = csv(out, "b7_against_flows")
    assert (b7["jitter_s_ci95_low"] <= b7["jitter_s"] + 1e-12).all()
