"""Every repository path that the code, the README and the reference in docs/
mention exists, and nothing points at documents outside the repository.

A mention is a token that starts with one of the repository's top-level
folders (``crates/qdisc/src/red.rs``, ``tests/data/``), or the target of a
relative markdown link (``[models](models.md#5-redopt)``). A token is looked
up from the repository root and from each folder that holds the mentioning
file, so a crate may name its own files by their path inside it. ``<name>``
placeholders
and ``*`` match any name and must match at least one path; URLs are ignored;
markdown anchors must name a heading of the linked page."""

import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

#: The folders at the top of the repository; a token starting with one of
#: them is taken for a path.
TOP_LEVEL = ("bench", "crates", "docs", "examples", "fuzz", "python", "tests", "validation")

#: The text files scanned, by suffix, and the scripts without one.
SUFFIXES = (".rs", ".py", ".md", ".toml", ".j2", ".sh", ".yml", ".yaml")
SCRIPTS = ("dev", ".ci/run")

#: Tracked files that are data, not prose or code: the malformed inputs are
#: wrong on purpose and the snapshots are engine output.
SKIPPED = ("tests/data/", "tests/__snapshots__/")

#: Mentions that name no file of the repository on purpose, with the reason.
EXEMPT = {
    "examples/red-vs-droptail.duckdb": "the results store that the commands in that example's comments write",
}

URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
PATH = re.compile(r"(?<![\w./<>*-])((?:%s)/[\w./<>*-]*)" % "|".join(TOP_LEVEL))
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"<[^<>/]*>")
# Written so that this file does not mention what it forbids.
INTERNAL = re.compile(r"(?<![\w.-])(?:spec|shared)/")


def tracked() -> dict[str, str]:
    """The scanned files of the checkout, relative path -> text."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"not a git checkout: {e}")
    names = [n for n in out.split("\0") if n and (n.endswith(SUFFIXES) or n in SCRIPTS)]
    return {n: (ROOT / n).read_text(encoding="utf-8") for n in names if not n.startswith(SKIPPED)}


def mentions(text: str, markdown: bool) -> list[tuple[int, str, str]]:
    """(line, token, kind) for every path token, kind "path" or "link"."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        line = URL.sub(" ", line)
        for m in PATH.finditer(line):
            token = m.group(1).rstrip(".")
            if token:
                found.append((number, token, "path"))
        if markdown:
            for m in LINK.finditer(line):
                target = m.group(1)
                if not re.match(r"[a-z][a-z0-9+.-]*:", target):
                    found.append((number, target, "link"))
    return found


def slug(heading: str) -> str:
    """The anchor GitHub gives a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M)}


def resolves(base: Path, token: str) -> bool:
    """Whether `token` names something under the folder `base`, placeholders
    and `*` matching any name."""
    token = token.rstrip("/")
    if "*" in token or PLACEHOLDER.search(token):
        pattern = PLACEHOLDER.sub("*", token)
        return any(base.glob(pattern))
    return (base / token).exists()


def problems(files: dict[str, str], root: Path = ROOT) -> list[str]:
    """One "file:line: message" per mention that names nothing."""
    out = []
    for name, text in files.items():
        folder = (root / name).parent
        bases = [root] + [p for p in [folder, *folder.parents] if p != root and root in p.parents]
        for line, token, kind in mentions(text, markdown=name.endswith(".md")):
            if kind == "path":
                if token in EXEMPT or any(resolves(b, token) for b in bases):
                    continue
                out.append(f"{name}:{line}: {token} does not exist")
                continue
            target, _, anchor = token.partition("#")
            page = (folder / target).resolve() if target else root / name
            if not page.exists():
                out.append(f"{name}:{line}: link {token}: {target} does not exist")
            elif anchor and page.suffix == ".md" and anchor not in anchors(page):
                out.append(f"{name}:{line}: link {token}: no heading #{anchor} in {target or name}")
    return out


def internal_mentions(files: dict[str, str]) -> list[str]:
    return [f"{name}:{number}: {line.strip()}" for name, text in files.items()
            for number, line in enumerate(text.splitlines(), 1) if INTERNAL.search(URL.sub(" ", line))]


def test_every_mentioned_path_exists():
    found = problems(tracked())
    assert not found, f"{len(found)} mentioned paths do not exist:\n" + "\n".join(found)


def test_nothing_mentions_internal_documents():
    found = internal_mentions(tracked())
    assert not found, "the project must explain itself; these lines point outside it:\n" + "\n".join(found)


def test_top_level_list_is_complete():
    folders = {n.split("/")[0] for n in tracked() if "/" in n and not n.startswith(".")}
    assert folders <= set(TOP_LEVEL), f"add {sorted(folders - set(TOP_LEVEL))} to TOP_LEVEL"


def test_exemptions_are_still_mentioned():
    text = "\n".join(tracked().values())
    stale = [p for p in EXEMPT if p not in text]
    assert not stale, f"exempt but no longer mentioned, remove from EXEMPT: {stale}"


# The checks themselves, on sample text. Sample names and bogus paths are
# built at run time so that this file itself mentions no missing path.

SAMPLE_MD = "docs/" + "sample.md"
SAMPLE_RS = "crates/sim/benches/" + "sample.rs"

def test_a_missing_path_is_reported_with_file_and_line():
    bogus = "crates/qdisc/src/" + "no_such_discipline.rs"
    sample = {SAMPLE_MD: f"# Sample\n\nsee `crates/qdisc/src/red.rs`,\nand `{bogus}`.\n"}
    assert problems(sample) == [f"{SAMPLE_MD}:4: {bogus} does not exist"]


def test_a_broken_markdown_link_and_anchor_are_reported():
    sample = {SAMPLE_MD: "[ok](qdiscs.md#red-and-the-red-family) [gone](gone.md)\n"
                         "[bad](qdiscs.md#no-such-heading)\n[web](https://example.org/x.md)\n"}
    assert problems(sample) == [f"{SAMPLE_MD}:1: link gone.md: gone.md does not exist",
                                f"{SAMPLE_MD}:2: link qdiscs.md#no-such-heading: "
                                "no heading #no-such-heading in qdiscs.md"]


def test_placeholders_globs_urls_and_crate_relative_paths():
    nothing = "crates/<crate>/" + "no_such_folder"
    sample = {SAMPLE_RS: "// python/aqmlab/studies/<study>/*.toml.j2, crates/*/src,\n"
                         "// " + "examples/" + "bench_openloop.rs (this crate's), the end.\n"
                         "// https://github.com/o/r/blob/main/tests/gone.py\n"
                         f"// {nothing}\n"}
    assert problems(sample) == [f"{SAMPLE_RS}:4: {nothing} does not exist"]


def test_internal_documents_are_reported():
    shared, spec = "sha" + "red/design.md", "spe" + "c/qdiscs.md"
    sample = {"README.md": f"fine\nsee ../{shared}\n", "x.py": f"# per {spec}\n",
              "y.py": "# see https://example.org/spe" + "c/x\n"}
    assert internal_mentions(sample) == [f"README.md:2: see ../{shared}", f"x.py:1: # per {spec}"]
