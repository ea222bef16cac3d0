import html
import re
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


CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')
PROBE_NONCE = "aqmlab-probe"


def probe(page: Path, scratch: Path, expression: str, *, keep_csp: bool = True, head: str = "",
          width: int = 1280) -> str | None:
    """Loads `page` in headless Chromium, `width` pixels wide, and returns
    the text of the JavaScript `expression` evaluated once the page has
    loaded, or None if the probe did not run. With `keep_csp` the page's own
    Content-Security-Policy stays in force and only the probe's script is let
    through (by a nonce); without it the policy is removed, to test what the
    page does on its own. `head` goes at the end of the page's head (after
    the policy, which covers only what follows it)."""
    text = page.read_text(encoding="utf-8")
    if keep_csp:
        text, n = CSP_META.subn(lambda m: m.group(0).replace(
            m.group(1), f"{m.group(1)}; script-src &#39;nonce-{PROBE_NONCE}&#39;"), text)
        assert n == 1, "the page has no Content-Security-Policy"
    else:
        text = CSP_META.sub("", text)
    script = f"""<div id="probe"></div><script nonce="{PROBE_NONCE}">
window.addEventListener("load", () => {{
  document.getElementById("probe").textContent = "probe:" + ({expression});
}});</script></body>"""
    text = text.replace("</head>", head + "</head>", 1).replace("</body>", script)
    copy = scratch / f"probe-{page.stem}.html"
    copy.write_text(text, encoding="utf-8")
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--window-size={width},900",
            # The virtual time budget lets the load event fire before the DOM is dumped.
            "--virtual-time-budget=10000", "--dump-dom", copy.as_uri()]
    dom = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert "</html>" in dom.stdout, dom.stderr[-2000:]
    m = re.search(r'id="probe">probe:([^<]*)<', dom.stdout)
    return None if m is None else html.unescape(m.group(1))


def decoded_images(page: Path, scratch: Path) -> tuple[int, int]:
    """Loads `page` in headless Chromium (under its own
    Content-Security-Policy) and returns how many of its images decoded to a
    real picture (over 300 x 200 pixels), and how many it has."""
    found = probe(page, scratch, "[...document.images].filter(i => i.complete && i.naturalWidth > 300 && "
                                 "i.naturalHeight > 200).length + ' of ' + document.images.length")
    assert found is not None
    ok, total = found.split(" of ")
    return int(ok), int(total)


def scroll_width(page: Path, scratch: Path, width: int = 1280) -> int:
    """Loads `page` in headless Chromium in a window `width` pixels wide and
    returns the page's scroll width: more than `width` means the reader
    must scroll sideways."""
    found = probe(page, scratch, "document.documentElement.scrollWidth", width=width)
    assert found is not None
    return int(found)


needs_chromium = pytest.mark.skipif(chromium() is None,
                                    reason="no Chromium on this machine (./dev setup installs it on Debian)")
