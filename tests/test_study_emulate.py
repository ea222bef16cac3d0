"""`aqmlab reproduce STUDY --mode emulate`: a study's testbed half run both
simulated and emulated, side by side. The emulated runs need root and
network namespaces; without them only the refusals are tested."""

import csv

import pytest

from aqmlab import emulation
from conftest import run_cli

WHY = emulation.unavailable()
pytestmark = pytest.mark.emulation


@pytest.mark.skipif(WHY is not None, reason=f"emulation impossible here: {WHY}")
def test_blue_testbed_runs_on_both_engines(tmp_path):
    out = tmp_path / "blue"
    r = run_cli("reproduce", "blue", "--scale", "smoke", "--mode", "emulate", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    with (out / "d4_testbed_engines.csv").open() as f:
        rows = list(csv.DictReader(f))
    # One row per scheme, number of connections and engine.
    assert sorted((row["scheme"], row["engine"]) for row in rows) == [
        ("BLUE", "emulated"), ("BLUE", "simulated"), ("RED", "emulated"), ("RED", "simulated")]
    for row in rows:
        # 10 bulk TCP connections keep the 10 Mb/s link busy either way;
        # goodput is the link less headers and idle time.
        assert 0.85 * 10e6 < float(row["goodput_bps"]) < 10e6
        assert int(row["n"]) == 2
    page = (out / "report.html").read_text()
    assert "Testbed emulated" in page and "Testbed simulated" in page


def test_a_study_without_a_testbed_is_refused(tmp_path):
    r = run_cli("reproduce", "bonald", "--scale", "smoke", "--mode", "emulate", "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "has no testbed half to emulate" in r.stderr and "blue" in r.stderr
    r = run_cli("reproduce", "--all", "--mode", "emulate")
    assert r.returncode == 2 and "--all runs every study simulated" in r.stderr


def test_td_vs_red_emulates_a1_after_its_udp_calibration():
    from aqmlab.experiment import Experiment
    from aqmlab.studies import STUDIES
    from aqmlab.studies.td_vs_red import EMULATED_A1

    study = STUDIES["td-vs-red"]
    # Without results, only REDopt's UDP calibration, which is simulated only.
    first = study.emulated_experiments("smoke")
    assert list(first) == ["a1-udp-n16"] and study.simulated_only("a1-udp-n16")
    assert not study.simulated_only("a1-n16")
    # The compared schemes take the emulation's shorter timing.
    em = EMULATED_A1["smoke"]
    timing = {"a1_duration": em["duration_s"], "a1_warmup": em["warmup_s"], "a1_reps": em["replications"]}
    exp = Experiment.from_toml(study._a1("smoke", 16, "compare", 0.01, timing))
    assert exp.replications == em["replications"]
    assert exp.base.to_dict()["duration"] == f"{em['duration_s']}s"
    assert len(exp.runs()) == 4 * em["replications"]  # TD, REDstd, GREDstd, REDopt


def test_the_emulated_experiment_files_say_why_they_are_shorter(monkeypatch):
    from aqmlab.experiment import Experiment
    from aqmlab.studies import STUDIES

    td = STUDIES["td-vs-red"]
    monkeypatch.setattr(td, "udp_loss", lambda results, experiment: 0.01)
    for text in (td.emulated_experiments("smoke", object())["a1-n16"],
                 STUDIES["blue"].emulated_experiments("smoke")["d4-testbed"]):
        assert text.startswith("# Emulated as well as simulated (--mode emulate). CHOSEN:")
        assert "because emulated runs take real time" in text.splitlines()[0]
        Experiment.from_toml(text)  # still a valid experiment file
