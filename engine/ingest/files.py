"""Which files an ingest reads and what they are: walking the given paths (no hidden files, links only when
asked, never outside a given folder), reading one within the size limit, and choosing its source type
(given, the stored version's, configured, or inferred from its name or title, with a note)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from engine.config import SOURCE_TYPES, Settings
from engine.errors import IngestError, printable

_SKIP_NAMES = {".DS_Store", "Thumbs.db"}


class Found(NamedTuple):
    """A file to ingest, or one refused before it is read (`refused` says why)."""

    path: Path
    refused: str | None = None


def _inside(target: Path, root: Path) -> bool:
    return target == root or root in target.parents


def _walk(root: Path, follow_symlinks: bool) -> Iterator[Found]:
    """Files below `root` (hidden ones skipped). A symbolic link whose target lies outside `root` is
    refused unless `follow_symlinks`; a folder reached twice (a link loop) is walked once."""
    real_root = root.resolve()
    seen = {real_root}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            yield Found(folder, f"cannot list the folder ({exc.strerror})")
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name in _SKIP_NAMES:
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                target = path.resolve()
                if not follow_symlinks and not _inside(target, real_root):
                    yield Found(path, f"a symbolic link to {printable(str(target))}, outside {printable(str(root))}: "
                                      "not followed (ingest the target itself, or pass --follow-symlinks)")
                    continue
                if not target.exists():
                    yield Found(path, f"a broken symbolic link (to {printable(str(target))})")
                    continue
            if entry.is_dir():
                real = path.resolve()
                if real not in seen:
                    seen.add(real)
                    stack.append(path)
            elif entry.is_file():
                yield Found(path)


def find_files(paths: Iterable[Path], *, follow_symlinks: bool = False) -> list[Found]:
    """Files named, and files below directories named (recursively, hidden files skipped).

    A file named on the command line is read even when it is a link: whoever named it chose it.
    Inside a folder, links that leave the folder are refused (see `_walk`).
    """
    found: list[Found] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(_walk(path, follow_symlinks), key=lambda f: str(f.path)))
        else:
            found.append(Found(path))
    return found


# Words of a file name or title that say what kind of source it is, most specific first.
_TYPE_WORDS = (
    ("contract", ("contract", "agreement", "licence", "license", "terms")),
    ("policy", ("policy", "policies", "procedure", "procedures", "manual")),
    ("guidance", ("guidance", "guide", "guideline", "guidelines", "faq", "handbook")),
    ("standard", ("standard", "iso", "iec")),
    ("regulation", ("regulation", "regulations", "rules", "rule", "directive", "cfr", "ordinance", "decree")),
    ("statute", ("act", "statute", "law", "usc")),
)


# Formats that say what kind of source they hold: ObliQA passages are regulatory text (the ADGM rulebooks); the
# eCFR is federal regulations and USLM the US Code ("xml:<schema>", engine.ingest.legalxml)
_FORMAT_TYPES = {"obliqa": ("regulation", "the ObliQA format (regulatory passages)"),
                 "xml:ecfr": ("regulation", "the eCFR format (the Code of Federal Regulations)"),
                 "xml:uslm": ("statute", "the USLM format (the US Code)")}


def infer_source_type(path: Path, title: str, fmt: str = "") -> tuple[str, str] | None:
    """(source type, why) from the words of the file name or the title, else from a format that says it
    (`fmt`: 'obliqa', 'xml:ecfr'); None when they say nothing. Never a silent default: the caller reports how
    the type was chosen.
    """
    for where, text in (("file name", path.stem), ("title", title)):
        words = set(re.findall(r"[a-z]+", text.lower()))
        for kind, keys in _TYPE_WORDS:
            found = next((k for k in keys if k in words), None)
            if found:
                return kind, f"the word '{found}' in the {where}"
    return _FORMAT_TYPES.get(fmt)


def choose_source_type(path: Path, title: str, fmt: str, given: str | None, previous: Any,
                        settings: Settings) -> tuple[str, list[str]]:
    """The source type: given, else the stored version's, else configured, else inferred with a note."""
    if given:
        return given, []
    if previous is not None:
        return previous.source_type, []
    if settings.source_type:
        return settings.source_type, []
    inferred = infer_source_type(path, title, fmt)
    if inferred is None:
        raise IngestError(str(path), "its source type is not given and neither its file name nor its title says it",
                          f"pass --source-type ({'|'.join(SOURCE_TYPES)}) or set EVIDENCE_SOURCE_TYPE")
    return inferred[0], [f"source type '{inferred[0]}' inferred from {inferred[1]}; pass --source-type to set it"]


def read_file(path: Path, settings: Settings) -> bytes:
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise IngestError(str(path), "not a regular file (a device, pipe or socket)", "name a document file")
        size = info.st_size
        if size > settings.max_file_bytes:
            raise IngestError(str(path), f"file is {size} bytes, over the limit of {settings.max_file_bytes}",
                              "raise EVIDENCE_MAX_FILE_BYTES or split the file")
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise IngestError(str(path), "no such file") from exc
    except IsADirectoryError as exc:  # pragma: no cover - directories are expanded first
        raise IngestError(str(path), "is a directory") from exc
    except PermissionError as exc:
        raise IngestError(str(path), "permission denied", "check the file's permissions") from exc
    except OSError as exc:
        raise IngestError(str(path), f"cannot read the file ({exc.strerror})") from exc
