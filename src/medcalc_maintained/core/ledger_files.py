"""Which files the corrections ledger is read from, and what of a file a release is made of.

The ledger readers (``ledger/records.py``, ``ledger/propose.py``, ``upstream/rebase.py``) and the
fingerprint of the stored release tables (``release/tables.py``) list the same files. This module
stands apart from ``ledger/`` so that a reader of a release, which fingerprints the ledger's files
but never reads a record, does not import the ledger package.

A record without a release (``release`` absent, empty or ``unreleased``: a contributor's pending
proposal, a deferred draft) is part of no release's tables (``apply.build(..., upto=V)`` never
applies it), so the fingerprint reads a file as :func:`released_content` gives it: its bytes without
the lines of those records, and nothing at all for a file that holds no other record. A proposal
appended with ``propose`` therefore leaves every release's tables current.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Iterable

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import UNRELEASED


def ledger_files(paths: Iterable[Path]) -> list[Path]:
    """YAML files of the given ledger files and directories (``Project.ledger_paths``), sorted by
    name within a directory."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.iterdir() if q.suffix in (".yaml", ".yml") and q.is_file()))
        elif p.is_file():
            out.append(p)
        else:
            raise DataError(p, "ledger path does not exist")
    return out


# line breaks YAML knows besides "\n": a file holding one is counted whole (its lines are not cut)
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


def released_content(path: Path) -> bytes | None:
    """What the release tables are made of in ledger file ``path``: its bytes without the lines of each
    record that belongs to no release (``release`` absent, null, empty or ``unreleased``), from the
    line of the record's ``- `` to the line before the next record (the file's end for the last),
    encoded as UTF-8; ``None`` when no record of a release is left (a file of pending proposals, an
    empty file). The file's bytes as they are when it holds no such record, and whenever its records
    cannot be told apart line by line (text that is not UTF-8 or does not parse as YAML, no block list
    ``corrections``, two records on one line, line breaks other than ``\\n``): then every byte counts."""
    return _released(Path(path).read_bytes())


@functools.lru_cache(maxsize=16)
def _released(data: bytes) -> bytes | None:
    spans = _record_lines(data)
    if spans is None:
        return data
    text, starts, stop, pending = spans
    if len(pending) == len(starts):
        return None
    if not pending:
        return data
    lines = text.split("\n")
    ends = [*starts[1:], stop]
    drop = {n for i in pending for n in range(starts[i], ends[i])}
    return "\n".join(line for n, line in enumerate(lines) if n not in drop).encode("utf-8")


def _record_lines(data: bytes) -> tuple[str, list[int], int, list[int]] | None:
    """(the text, the first line of each record, the line after the last one's, the records without a
    release), or ``None`` when the records cannot be cut out line by line."""
    import yaml

    from medcalc_maintained.core.yaml_text import compose_yaml

    try:
        text = data.decode("utf-8")
        if any(b in text for b in _OTHER_BREAKS):
            return None
        root = compose_yaml(text)
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return None
    if root is None:
        return text, [], 0, []
    if not isinstance(root, yaml.MappingNode):
        return None
    found = [v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "corrections"]
    seq = found[0] if len(found) == 1 else None
    if not found or (isinstance(seq, yaml.ScalarNode) and seq.tag.endswith(":null")) or (
            isinstance(seq, yaml.SequenceNode) and not seq.value):
        return text, [], 0, []  # no record
    if not isinstance(seq, yaml.SequenceNode) or seq.flow_style:
        return None
    starts = [r.start_mark.line for r in seq.value]
    lines = text.split("\n")
    if any(b <= a for a, b in zip(starts, starts[1:])) or any(
            lines[r.start_mark.line][:r.start_mark.column].strip() != "-" for r in seq.value):
        return None  # two records on a line, or a record that does not begin on the line of its "- "
    end = seq.end_mark
    stop = end.line if end.column == 0 else end.line + 1
    return text, starts, stop, [i for i, r in enumerate(seq.value) if _without_release(r)]


def _without_release(node: Any) -> bool:
    """Whether a record's node has no release: no ``release`` key, or a null, empty or ``unreleased`` one
    (``Record.release``); a record that is not a mapping, or whose release is not a plain value, counts."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return False
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "release":
            return isinstance(value, yaml.ScalarNode) and (value.tag.endswith(":null")
                                                            or value.value in ("", UNRELEASED))
    return True
