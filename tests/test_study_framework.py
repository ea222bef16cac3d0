"""The study report's building blocks: how numbers are shown, and the claims
table's verdicts."""

from __future__ import annotations

import pytest

from aqmlab.exceptions import AqmlabError
from aqmlab.studies.framework import StudyReport, _header, _shown


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
    report.out = tmp_path
    with pytest.raises(AqmlabError, match="verdict 'probably'"):
        report.claims([{"claim": "c", "paper": "1", "aqmlab": "1", "verdict": "probably", "how": "h"}], "t")
    report.claims([{"claim": "c", "paper": "1", "aqmlab": "1", "verdict": "same direction, different size",
                    "how": "h"}], "t")
    assert (tmp_path / "claims.csv").read_text().splitlines()[1].startswith("c,1,1,")
