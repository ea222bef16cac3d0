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


def chromium() -> str | None:
    """The headless browser the report tests use, if this machine has one."""
    import shutil

    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def decoded_images(page: Path, scratch: Path) -> tuple[int, int]:
    """Loads `page` in headless Chromium and returns how many of its images
    decoded to a real picture (over 300 x 200 pixels), and how many it has."""
    import re

    probe = scratch / f"probe-{page.stem}.html"
    probe.write_text(page.read_text().replace("</body>", """<div id="probe"></div><script>
window.addEventListener("load", () => {
  const imgs = [...document.images];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 300 && i.naturalHeight > 200).length;
  document.getElementById("probe").textContent = "decoded " + ok + " of " + imgs.length;
});</script></body>"""))
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    # The virtual time budget lets the load event fire before the DOM is dumped.
    dom = subprocess.run(args + ["--virtual-time-budget=10000", "--dump-dom", probe.as_uri()], capture_output=True,
                         text=True, timeout=120)
    m = re.search(r'id="probe">decoded (\d+) of (\d+)<', dom.stdout)
    assert m is not None, dom.stderr[-2000:]
    return int(m.group(1)), int(m.group(2))


def scroll_width(page: Path, scratch: Path, width: int = 1280) -> int:
    """Loads `page` in headless Chromium in a window `width` pixels wide and
    returns the page's scroll width: more than `width` means the reader
    must scroll sideways."""
    import re

    probe = scratch / f"width-{page.stem}.html"
    probe.write_text(page.read_text().replace("</body>", """<div id="probe"></div><script>
window.addEventListener("load", () => {
  document.getElementById("probe").textContent = "width " + document.documentElement.scrollWidth;
});</script></body>"""))
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--window-size={width},900", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()]
    dom = subprocess.run(args, capture_output=True, text=True, timeout=120)
    m = re.search(r'id="probe">width (\d+)<', dom.stdout)
    assert m is not None, dom.stderr[-2000:]
    return int(m.group(1))


needs_chromium = pytest.mark.skipif(chromium() is None,
                                    reason="no Chromium on this machine (./dev setup installs it on Debian)")
