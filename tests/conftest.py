import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs the aqmlab command in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, cwd=cwd or ROOT)


@pytest.fixture
def cli():
    return run_cli
