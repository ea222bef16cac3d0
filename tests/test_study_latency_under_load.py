"""The latency-under-load study: the smoke-scale reproduction runs end to
end, its CSVs and figures are those the study names, and the numbers that
are known independently hold: a probe cannot wait longer than a full FIFO
takes to drain, goodput cannot exceed the link's payload rate, Jain's index
over four rates lies in [1/4, 1], a periodic probe sends what its rate and
the window allow, and the queueing histograms pool to the probe's packets."""

from __future__ import annotations

import json
import math
import tomllib

import duckdb
import pandas as pd
import pytest

from aqmlab.studies import reproduce
from aqmlab.studies.framework import VERDICTS
from aqmlab.studies.latency_under_load import FIFO_PKTS, PACKET_B, QDISCS, SCALES, Histogram, base_delay_s

SMOKE = SCALES["smoke"]
NETWORKS = [(r, t) for r in SMOKE["rates"] for t in SMOKE["rtts"]]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llu-smoke")
    reproduce("latency-under-load", "smoke", folder)
    return folder


def csv(out, name):
    return pd.read_csv(out / f"{name}.csv")


def summaries(out, experiment):
    with duckdb.connect(str(out / "results.duckdb"), read_only=True) as db:
        rows = db.execute("select labels, summary from runs where experiment = ? and status = 'ok'",
                          [experiment]).fetchall()
    return [(json.loads(labels), json.loads(summary)) for labels, summary in rows]


def test_report_and_files_exist(out):
    page = (out / "report.html").read_text()
    assert "SMOKE scale" in page and "Published expectations" in page
    for name in ["latency", "goodput", "queue", "sensitivity_no_bbr", "runs", "claims"]:
        assert (out / f"{name}.csv").exists(), name
    for fig in ["ping_cdf", "voip_box", "voip_timeseries", "goodput_by_cc"]:
        assert (out / f"{fig}.png").exists() and (out / f"{fig}.svg").exists(), fig
    names = sorted(p.stem for p in (out / "experiments").glob("*.toml"))
    assert names == sorted([f"llu-{r}mbps-{t}ms" for r, t in NETWORKS] +
                           [f"llu-{r}mbps-20ms-nobbr" for r in SMOKE["rates"]])


def test_tables_cover_every_discipline_and_network(out):
    lat = csv(out, "latency")
    assert list(dict.fromkeys(lat["qdisc"])) == list(QDISCS)
    assert sorted(set(zip(lat["rate_mbps"], lat["rtt_ms"]))) == sorted(NETWORKS)
    assert (lat["n"] == SMOKE["replications"]).all()
    good = csv(out, "goodput")
    for col in ["cubic_bps", "bbr_bps", "reno_bps", "prague_bps", "jain_cc", "bbr_share", "jain_cc_ci95_low"]:
        assert col in good.columns, col
    sens = csv(out, "sensitivity_no_bbr")
    assert "bbr_bps" not in sens.columns and len(sens) == len(QDISCS) * len(SMOKE["rates"])


def test_fifo_probe_waits_no_longer_than_the_buffer_drains(out):
    # A probe packet that is not dropped finds at most 1000 packets of at
    # most 1500 B queued, plus one in transmission, at the bottleneck (the
    # access links never queue): 1001 x 1500 x 8 / rate.
    lat = csv(out, "latency")
    for rate, rtt in NETWORKS:
        row = lat[(lat["qdisc"] == "FIFO") & (lat["rate_mbps"] == rate) & (lat["rtt_ms"] == rtt)].iloc[0]
        bound = (FIFO_PKTS + 1) * PACKET_B * 8 / (rate * 1e6)
        assert 0 < row["ping_p99_s"] <= bound * 1.008, (rate, row["ping_p99_s"], bound)


def test_fairness_within_its_bounds_and_by_its_formula(out):
    # (Goodput has no tight upper bound in a 6-s window: data a receiver
    # held out of order before the window counts when a retransmission
    # fills the hole, so through a 1000-packet FIFO it can exceed the link.)
    runs = csv(out, "runs")
    ccs = ["cubic", "bbr", "reno", "prague"]
    for _, r in runs.iterrows():
        x = [r[f"{c}_bps"] for c in ccs]
        assert r["jain_cc"] == pytest.approx(sum(x) ** 2 / (4 * sum(v * v for v in x)), rel=1e-5)
        assert r["bbr_share"] == pytest.approx(r["bbr_bps"] / sum(x), rel=1e-5)
    assert runs["jain_cc"].between(0.25, 1.0).all()
    assert runs["bbr_share"].between(0.0, 1.0).all()
    assert runs["utilization"].between(0.9, 1.0).all()


def test_probes_send_at_their_rate_and_histograms_hold_their_packets(out):
    window = SMOKE["duration"] - SMOKE["warmup"]
    text = (out / "experiments" / "llu-10mbps-20ms.toml").read_text()
    exp = tomllib.loads(text)
    voip = next(t for t in exp["scenario"]["traffic"] if t["name"] == "voip")
    assert (voip["rate"], voip["size"]) == ("80kbps", "200B")
    for labels, s in summaries(out, "llu-10mbps-20ms"):
        v = s["traffic"]["voip"]
        # 200 B every 20 ms, unjittered: 50 packets a second in the window.
        assert abs(v["sent"] - 50 * window) <= 1
        for probe in ("ping", "voip"):
            g = s["traffic"][probe]
            for key in ("queueing_histogram", "delay_histogram"):
                assert sum(g[key]["counts"]) == g["delivered"], (probe, key)
            # Queueing is the delay less the path's fixed part, so the
            # smallest delay is at least the base one-way delay.
            base = base_delay_s(10, 20, {"ping": 84, "voip": 200}[probe])
            assert g["delay_histogram"]["upper_s"][0] > base - 1e-12


def test_pooled_histogram_quantiles():
    # Two runs' bins pooled: 3 samples in [0, 1) ns, 1 in [1 ms, 1.0156 ms).
    h = Histogram()
    h.add({"lower_s": [0.0], "upper_s": [1e-9], "counts": [2]})
    h.add({"lower_s": [0.0, 1e-3], "upper_s": [1e-9, 1.015625e-3], "counts": [1, 1]})
    assert h.quantile(0.75) == pytest.approx(0.5e-9)
    assert h.quantile(1.0) == pytest.approx(1.0078125e-3)
    x, y = h.cdf()
    assert list(y) == [0.75, 1.0] and list(x) == [1e-9, 1.015625e-3]


def test_claims_have_known_verdicts(out):
    claims = csv(out, "claims")
    assert set(claims["verdict"]) <= set(VERDICTS)
    assert len(claims) == 14
    assert not claims["aqmlab"].isna().any() and not claims["paper"].isna().any()
    assert all(math.isfinite(float(x)) for x in csv(out, "goodput")["jain_cc"])
