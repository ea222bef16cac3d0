"""`aqmlab reproduce --all`: the scorecard gathers every study's claims and
counts their verdicts."""

from __future__ import annotations

import pandas as pd

from aqmlab.studies.scorecard import reproduce_all, write_scorecard


def claims(folder, rows):
    folder.mkdir(parents=True)
    pd.DataFrame(rows, columns=["claim", "paper", "aqmlab", "verdict", "how"]).to_csv(folder / "claims.csv",
                                                                                      index=False)


def test_scorecard_gathers_and_counts_the_studies_claims(tmp_path):
    claims(tmp_path / "ted-quick", [["a", "0.99", "0.37", "not reproduced", "r"],
                                    ["b", "yes", "98%", "reproduced", "r"]])
    claims(tmp_path / "blue-quick", [["c", "0", "5.8%", "not reproduced", "r"],
                                     ["d", "from 800", "-", "not run at this scale", "r"]])
    (tmp_path / "bonald-quick").mkdir()  # a study without a claims table yet
    done = [{"study": s, "folder": tmp_path / f"{s}-quick", "seconds": 60.0} for s in ("bonald", "blue", "ted")]
    page = write_scorecard("quick", tmp_path, done)
    table = pd.read_csv(tmp_path / "scorecard.csv")
    assert list(table.columns) == ["study", "claim", "paper", "aqmlab", "verdict", "how"]
    assert list(table["study"]) == ["blue", "blue", "ted", "ted"]
    text = page.read_text()
    assert "4 claims: 1 reproduced, 2 not reproduced, 1 not run at this scale." in " ".join(text.split())
    assert "none yet" in text and 'href="ted-quick/report.html"' in text and "3.0 min" in text
    md = (tmp_path / "scorecard.md").read_text()
    # The counts per study and in all, in the order of VERDICTS.
    assert "| `blue` | 2 | 0 | 0 | 1 | 0 | 1 | 1.0 |" in md
    assert "| `ted` | 2 | 1 | 0 | 1 | 0 | 0 | 1.0 |" in md
    assert "| all | 4 | 1 | 0 | 2 | 0 | 1 | 3.0 |" in md
    assert md.count("\n| `ted` | ") == 3  # its count row and its two claims


def test_reproduce_all_runs_each_study_into_its_folder(tmp_path):
    page = reproduce_all("smoke", tmp_path, studies=["parallel-queue"])
    assert (tmp_path / "parallel-queue-smoke" / "report.html").exists()
    assert page == tmp_path / "scorecard.html" and (tmp_path / "scorecard.csv").exists()


def test_cli_refuses_a_study_and_all_together(cli):
    r = cli("reproduce", "ted", "--all")
    assert r.returncode == 2 and "not both" in r.stderr and "Traceback" not in r.stderr
