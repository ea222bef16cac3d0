"""``aqmlab model``: every model on the command line, its table and its JSON."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from aqmlab.cli import cli

NAMES = ["bonald-drop", "bonald-mix", "bonald-consecutive", "bonald-queue", "lindley", "ted-qmax",
         "ted-service-time", "fair-goodput", "jain", "mathis", "padhye", "redopt", "mm1k", "md1"]

# The quantities each model's --json must carry, under the names the models share.
KEYS = {
    "bonald-drop": {"rho", "loss"},
    "bonald-mix": {"rho", "fraction", "loss_b", "loss_s"},
    "bonald-consecutive": {"mean", "var", "n", "distribution"},
    "bonald-queue": {"mean", "var", "loss", "k", "distribution", "delay_mean"},
    "lindley": {"q_e", "f_prime", "mean", "var", "q_bits", "distribution", "gauss_var"},
    "ted-qmax": {"deadline_us"},
    "ted-service-time": {"s_max"},
    "fair-goodput": {"goodput_bps", "jain"},
    "jain": {"jain"},
    "mathis": {"p", "rate_pps", "rate_bps"},
    "padhye": {"p", "rate_pps", "rate_approx_pps", "E_W", "Q"},
    "redopt": {"min_th", "max_th", "max_p", "w_q", "buffer", "p_star", "R", "w_g", "D"},
    "mm1k": {"rho", "loss", "mean", "var"},
    "md1": {"rho", "wait_mean", "queue_mean"},
}


def invoke(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def test_list_names_every_model_once() -> None:
    lines = invoke("model", "--list").splitlines()
    assert [line.split()[0] for line in lines] == NAMES
    assert all(len(line.split()) > 2 for line in lines)  # each has its line of text


@pytest.mark.parametrize("name", NAMES)
def test_every_model_runs_with_its_defaults(name: str) -> None:
    text = invoke("model", name)
    assert text.startswith(f"{name}: ")
    data = json.loads(invoke("model", name, "--json"))
    assert KEYS[name] <= set(data), f"{name}: missing {KEYS[name] - set(data)}"


def test_mathis_json_gives_the_reference_vector() -> None:
    data = json.loads(invoke("model", "mathis", "--p", "0.01", "--rtt", "100ms", "--mss", "1460B", "--b", "2",
                             "--json"))
    assert data["rate_pps"] == [pytest.approx(86.60, abs=0.005)]
    assert data["rate_Bps"] == [pytest.approx(126_440, rel=1e-5)]


def test_a_range_sweeps_a_parameter() -> None:
    data = json.loads(invoke("model", "mm1k", "--rho", "0.5:2:0.5", "--K", "10", "--json"))
    assert data["rho"] == [0.5, 1.0, 1.5, 2.0]
    assert data["loss"][1] == pytest.approx(1 / 11, rel=1e-12)


def test_ted_qmax_prints_megabytes_by_deadline_and_ports() -> None:
    text = invoke("model", "ted-qmax")
    header = next(line for line in text.splitlines() if line.startswith("deadline_us"))
    assert header.split() == ["deadline_us"] + [f"q_max_MB_{j}_ports" for j in (10, 20, 30, 40, 50)]
    row = next(line for line in text.splitlines() if line.startswith("125 "))
    # (J - 1) D C / 8 in MB: 9 * 125 us * 10 Gb/s = 1.40625 MB ... 49 -> 7.65625 MB.
    assert row.split()[1:] == ["1.40625", "2.96875", "4.53125", "6.09375", "7.65625"]


def test_redopt_accepts_units(cli) -> None:
    data = json.loads(invoke("model", "redopt", "--rate", "10Mbps", "--N", "64", "--rtt", "150ms",
                             "--packet", "1514B", "--udp-rate", "1Mbps", "--json"))
    assert data["C"] == pytest.approx(9e6 / (8 * 1514), rel=1e-12)
    assert data["min_th"] < data["max_th"] <= data["buffer"]


@pytest.mark.parametrize(("args", "message"), [
    (["model", "mathis", "--rtt", "fast"], "error: --rtt: 'fast' is not a number, or one with a unit: ns, us"),
    (["model", "mathis", "--p", "2"], "error: p (loss probability): need 0 < p < 1"),
    (["model", "bonald-drop", "--qdisc", "codel"], "error: --qdisc: 'codel' is not one of td, red"),
    (["model", "bonald-drop", "--rho", "3:1:1"], "error: --rho: '3:1:1' is not a range"),
    (["model", "redopt", "--rate", "1Mbps", "--udp-rate", "2Mbps"], "error: udp_rate_bps"),
    (["model", "lindley", "--N", "1"], "error: "),
    (["model", "nosuch"], "error: No such command 'nosuch'"),
])
def test_bad_input_is_one_line_and_exit_2(cli, args: list[str], message: str) -> None:
    res = cli(*args)
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), res.stderr
    assert "Traceback" not in res.stderr
