"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from aqmlab.exceptions import AqmlabError


def write_atomic(path: Path, write: Callable[[str], object]) -> None:
    """Calls `write(tmp)` on a temporary file in `path`'s folder, then renames
    it to `path`, so an interrupted or failed write leaves nothing behind
    and an existing `path` is replaced whole or not at all."""
    if not path.parent.exists():
        raise AqmlabError(f"{path}: the folder {path.parent} does not exist")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
