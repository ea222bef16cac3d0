"""The study report's building blocks: how numbers are shown, and the claims
table's verdicts."""

from __future__ import annotations

import pytest

from aqmlab.exceptions import AqmlabError
from aqmlab.studies.framework import (Study, StudyReport, _header, _shown, combine_verdicts, effect_verdict, range_verdict,
                                     within_bounds)


@pytest.mark.parametrize("value, column, shown", [
    (3.2444e7, "goodput_bps", "32.44"),      # rates in Mb/s, four significant digits
    (12.345678, "qlen_mean_pkts", "12.35"),
    (0.000123456, "loss_rate", "0.0001235"),
    (1234567.0, "events", "1,234,567"),       # whole numbers with separators
    (0.991167, "jain", "0.9912"),
    (float("nan"), "jain", "-"),
    (2.5e-9, "x", "2.5e-09"),                 # tiny values keep an exponent
    ("TED S3", "scheme", "TED S3"),
])
def test_numbers_are_shown_with_units_and_four_digits(value, column, shown):
    assert _shown(value, column) == shown


def test_rate_columns_say_their_unit():
    assert _header("goodput_bps") == "goodput (Mb/s)" and _header("loss_rate") == "loss_rate"


def test_claims_refuse_a_verdict_outside_the_vocabulary(tmp_path):
    report = StudyReport.__new__(StudyReport)
    report.out, report.study = tmp_path, Study()
    with pytest.raises(AqmlabError, match="verdict 'probably'"):
        report.claims([{"claim": "c", "paper": "1", "aqmlab": "1", "verdict": "probably", "how": "h"}], "t")
    report.claims([{"claim": "c", "paper": "1", "aqmlab": "1", "verdict": "same direction, different size",
                    "how": "h"}], "t")
    assert (tmp_path / "claims.csv").read_text().splitlines()[1].startswith("c,1,1,")


def ci(mean, low, high):
    return {"mean": mean, "ci95_low": low, "ci95_high": high}


def test_effect_verdicts_follow_the_interval():
    # The paper: +2 to +8 (Mb/s, say).
    assert effect_verdict(ci(4, 3, 5), 2, 8) == "reproduced"
    assert effect_verdict(ci(0.5, 0.2, 0.8), 2, 8) == "same direction, different size"
    assert effect_verdict(ci(-1, -1.5, -0.5), 2, 8) == "not reproduced"
    assert effect_verdict(ci(0.1, -0.5, 0.7), 2, 8) == "inconclusive"
    # A decrease, -9% to -3%.
    assert effect_verdict(ci(-0.05, -0.06, -0.04), -0.09, -0.03) == "reproduced"
    assert effect_verdict(ci(-0.01, -0.012, -0.008), -0.09, -0.03) == "same direction, different size"


def test_range_verdicts_and_their_combination():
    assert range_verdict(ci(0.014, 0.012, 0.016), 0.010, 0.020) == "reproduced"
    assert range_verdict(ci(0.035, 0.032, 0.038), 0.010, 0.020) == "not reproduced"
    assert range_verdict(ci(0.019, 0.017, 0.021), 0.010, 0.020) == "inconclusive"
    assert combine_verdicts(["reproduced", "same direction, different size"]) == "same direction, different size"
    assert combine_verdicts(["reproduced", "inconclusive", "not reproduced"]) == "not reproduced"
    assert combine_verdicts(["reproduced", "reproduced"]) == "reproduced"


def test_an_interval_reaching_past_what_the_metric_can_be_is_cut_there():
    # Jain's index of 0.998 [0.995, 1.0001] from three runs: nothing above 1
    # exists, so the claim "within [0.95, 1]" holds; a real shortfall still
    # fails it.
    jain = ci(0.998, 0.995, 1.0001)
    assert range_verdict(jain, 0.95, 1.0) == "inconclusive"
    assert range_verdict(within_bounds(jain, hi=1.0), 0.95, 1.0) == "reproduced"
    assert within_bounds(jain, hi=1.0) == ci(0.998, 0.995, 1.0)
    assert range_verdict(within_bounds(ci(0.96, 0.90, 1.02), hi=1.0), 0.95, 1.0) == "inconclusive"
    assert within_bounds(ci(0.5, -0.2, 1.2), lo=0.0) == ci(0.5, 0.0, 1.2)


def test_toml_value_writes_non_finite_numbers_only_when_asked():
    import tomllib

    from aqmlab.exceptions import AqmlabError
    from aqmlab.studies.framework import toml_value

    tree = {"a": [1.5, float("inf")], "b c": {"d": -float("inf"), "e": float("nan")}}
    with pytest.raises(AqmlabError, match="cannot write inf"):
        toml_value(tree)
    text = toml_value(tree, non_finite=True)
    assert text == '{ "a" = [1.5, inf], "b c" = { "d" = -inf, "e" = nan } }'
    back = tomllib.loads(f"x = {text}")["x"]
    assert back["a"] == [1.5, float("inf")] and back["b c"]["d"] == -float("inf") and back["b c"]["e"] != back["b c"]["e"]
