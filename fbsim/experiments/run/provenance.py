"""Provenance: what every table written by fbsim says about how it was made.

It is stored as JSON under the key `fbsim` of the Parquet schema metadata; `read_provenance`
reads it back. The time is the start of the run (a resumed sweep keeps its first start), or
SOURCE_DATE_EPOCH when that is set, for byte-reproducible files.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
from functools import cache
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fbsim import jsonfile
from fbsim.errors import DamagedFile, UsageError, cut
from fbsim.experiments.metrics.stats import STATS_VERSION
from fbsim.game.layout import LAYOUT_VERSION
from fbsim.kernel.layout import KERNEL_VERSION
from fbsim.rules import RULES_VERSION
from fbsim.version import __version__

META_KEY = b"fbsim"
DIGEST_KEY = b"fbsim_content"  # the SHA-256 of a table's data (`content_digest`)


def now_iso() -> str:
    # (read as `fbsim.environment.check_environment` checks it: blank is unset, spaces around
    # the digits do not count)
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    t = (_dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch.isascii() and epoch.isdigit()
         else _dt.datetime.now(_dt.UTC))
    return t.replace(microsecond=0).isoformat()


@cache
def git_revision() -> str | None:
    """The project's git revision (with `-dirty` for uncommitted changes), or None."""
    root = Path(__file__).resolve().parents[3]  # the checkout: fbsim/experiments/run/ is below
    if not (root / ".git").exists():
        return None
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                "fbsim"], cwd=root, capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("-dirty" if dirty else "")


PROVENANCE_KEYS = ("fbsim_version", "kernel_version", "rules_version", "layout_version",
                   "stats_version", "git_revision", "numba_version", "numpy_version",
                   "pyarrow_version", "python_version", "time")  # (`base_provenance`'s)


def base_provenance(time: str) -> dict:
    """What every output records of the code and the machine that wrote it
    (`PROVENANCE_KEYS`)."""
    return {
        "fbsim_version": __version__,
        "kernel_version": KERNEL_VERSION,
        "rules_version": RULES_VERSION,
        "layout_version": LAYOUT_VERSION,
        "stats_version": STATS_VERSION,
        "git_revision": git_revision(),
        "numba_version": numba.__version__,
        "numpy_version": np.__version__,
        "pyarrow_version": pa.__version__,
        "python_version": platform.python_version(),
        "time": time,
    }


def write_table(df: pd.DataFrame, path: Path, provenance: dict) -> None:
    """Write `df` to `path` atomically (a temporary file, then a rename)."""
    from fbsim.experiments.run.lock import move_into_place

    move_into_place(write_table_beside(df, path, provenance), path)


def write_table_beside(df: pd.DataFrame, path: Path, provenance: dict) -> Path:
    """Write `df` to a temporary file beside `path` (same folder, so that `os.replace` onto
    `path` is atomic) and return it; removed again if the write fails."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[META_KEY] = json.dumps(provenance, sort_keys=True, default=str).encode()
    meta[DIGEST_KEY] = content_digest(table).encode()
    table = table.replace_schema_metadata(meta)
    tmp = Path(path).with_name(f".{Path(path).name}.tmp{os.getpid()}")
    try:
        pq.write_table(table, tmp, compression="zstd")
    except OSError as e:  # (pyarrow's names no file, or names the temporary: name `path`)
        tmp.unlink(missing_ok=True)
        raise write_error(e, path) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def write_error(e: OSError, path: str | Path) -> OSError:
    """The OSError of a failed write of `path` (through its temporary), naming `path`, with
    the errno and reason read from pyarrow's text where it gives them there ("Error writing
    bytes to file. Detail: [errno 28] No space left on device")."""
    import re

    m = re.search(r"\[errno (\d+)\] (.+)$", str(e).strip())
    errno_, reason = (int(m.group(1)), m.group(2)) if m else (e.errno, e.strerror or str(e))
    return OSError(errno_, reason, str(path))


def read_provenance(path: str | Path) -> dict:
    """The provenance stored in a Parquet file written by fbsim."""
    meta = pq.read_schema(path).metadata or {}
    if META_KEY not in meta:
        raise ValueError(f"{path}: no fbsim provenance in its metadata")
    return jsonfile.loads(meta[META_KEY])


def content_digest(table: pa.Table) -> str:
    """The SHA-256 of a table's columns (names, types and values, not its metadata): written
    beside the provenance, and checked when the table is read back, so that a file whose
    contents were changed after fbsim wrote it (a column edited, dropped or emptied, rows
    added) is refused instead of trusted."""
    import hashlib

    frame = table.replace_schema_metadata(None).to_pandas()
    h = hashlib.sha256(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    for name in frame.columns:  # (by value: Arrow's buffers may differ for the same values)
        try:
            h.update(pd.util.hash_pandas_object(frame[name], index=False).values.tobytes())
        except TypeError:  # (unhashable values, e.g. lists)
            h.update(repr(table.column(name).to_pylist()).encode())
    return h.hexdigest()


def check_content(path: str | Path, way_out: str = "write it again") -> None:
    """`DamagedFile`, naming the file and `way_out`, when a table's contents are not those
    fbsim wrote (`content_digest`); a table written before the checksum passes. (Errors
    reading the file are the caller's to word: OSError, ValueError, ArrowException.)"""
    arrow = pq.read_table(path)
    meta = arrow.schema.metadata or {}
    if DIGEST_KEY in meta and meta[DIGEST_KEY].decode() != content_digest(arrow):
        raise DamagedFile(f"{path}: its contents were changed after fbsim wrote it (they do "
                          f"not match the checksum it was written with); {way_out}")


def read_table(path: str | Path, way_out: str = "write it again", table: str | None = None
               ) -> pd.DataFrame:
    """A table with its provenance in `df.attrs['provenance']`; `DamagedFile`, naming the
    file and `way_out`, when it cannot be read back, when its contents are not those fbsim
    wrote (`content_digest`; tables written before the digest are read as they are), or
    when it is not the `table` (its provenance's "table" key) that the dataset keeps there
    (another command wrote over it)."""
    try:
        check_content(path, way_out)
        df = pd.read_parquet(path)
        df.attrs["provenance"] = read_provenance(path)
    except (OSError, ValueError, pa.ArrowException) as e:
        raise DamagedFile(f"{path}: damaged, or not a table fbsim wrote "
                          f"({type(e).__name__}: {cut(str(e))}); {way_out}") from None
    found = df.attrs["provenance"].get("table")
    if table is not None and found != table:
        what = df.attrs["provenance"].get("kind", "another command's output")
        raise DamagedFile(f"{path}: not this dataset's {table} table (it holds "
                          f"{cut(str(found or what))}); {way_out}")
    return df


def dataset_kind(folder: Path) -> str | None:
    """Which command's dataset `folder` holds, from the files each one writes first; None
    for a folder that holds none."""
    def has(*names: str) -> bool:
        return any((folder / n).exists() for n in names)

    if not folder.is_dir():
        return None
    if has("sweep.json", "points"):
        return "sweep"
    if has("trials.json", "trials"):
        return "rules search (tune --equilibrium)"
    if has(*(f"p{n}/state.json" for n in range(3, 7))):
        return "equilibrium"
    if (has("exploitability.parquet", "search/summary.json")
            or any(folder.glob("*-p[3-6]/search.parquet"))):
        return "exploit"
    if has("gen-00", "candidates.parquet"):
        return "tune"
    if has("ladder.parquet", "ladder.json"):
        return "ladder"
    return None


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def check_output_folder(out: Path, flag: str, kinds: tuple[str, ...]) -> None:
    """`out` may be new, empty, or a dataset of one of `kinds` (the command's own, which it
    resumes); another command's dataset is refused (`UsageError`) before anything is
    written."""
    kind = dataset_kind(out)
    if kind is not None and kind not in kinds:
        raise UsageError(f"{flag} {out}: holds another command's dataset ({_a(kind)}); "
                         "write elsewhere")


def check_places(files: tuple = (), folders: tuple = ()) -> None:
    """Each of `files` a file or absent, each of `folders` a folder or absent: what a
    command will write there, checked before its lock and its first game (a folder in a
    file's place would stop it only after it had written its other outputs). UsageError
    naming the first that is not."""
    for p in map(Path, [*files, *folders]):
        if p.is_symlink() and not p.exists():  # (a link to nothing, or a loop of links)
            raise UsageError(f"{p}: a link to nothing is in the place of what this command "
                             "writes; remove it, or write elsewhere")
    for p in map(Path, files):
        if (p.exists() or p.is_symlink()) and not p.is_file():
            raise UsageError(f"{p}: a folder is in the place of a file this command writes; "
                             "remove it, or write elsewhere")
    for p in map(Path, folders):
        if (p.exists() or p.is_symlink()) and not p.is_dir():
            raise UsageError(f"{p}: a file is in the place of a folder this command writes "
                             "into; remove it, or write elsewhere")


def check_output_file(path: Path, flag: str, kinds: tuple[str, ...]) -> None:
    """An output file may not land in another command's dataset folder, nor replace a file
    that is not one of `kinds` (its provenance's "kind") that fbsim wrote: `UsageError`."""
    kind = dataset_kind(path.parent)
    if kind is not None:
        raise UsageError(f"{flag} {path}: {path.parent} is another command's dataset "
                         f"({_a(kind)}); write elsewhere")
    check_replaceable(path, flag, kinds)


def check_replaceable(path: Path, flag: str, kinds: tuple[str, ...]) -> None:
    """A table a command writes into its own folder may replace only a table of one of
    `kinds` that fbsim wrote (its provenance's "kind"), not a user's own file: `UsageError`."""
    if path.exists() or path.is_symlink():
        try:
            kind = read_provenance(path).get("kind")
        except Exception:  # not a table fbsim wrote (or a damaged one): not ours to replace
            kind = None
        if kind not in kinds:
            raise UsageError(f"{flag} {path}: exists and is not "
                             + (" or ".join(f"a {k} table" for k in kinds)) + " that fbsim "
                             "wrote; remove it or write elsewhere")
