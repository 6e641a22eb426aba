"""On-disk cache of paid verifier calls: one JSON file per call, written atomically.

The key is the sha256 of ``(backend, model, prompt sha256, run, settings digest)``. A file is
written with :func:`medcalc_maintained.core.atomic.write_text_atomic` (temporary file + rename) as soon as
its call completes, so a process killed at any moment leaves either the complete entry or none:
the cache is never corrupted, and a resumed run neither pays for a finished call again nor
records a vote twice (one file per key). Leftover ``*.tmp`` files of a killed writer are ignored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from medcalc_maintained.core.atomic import write_text_atomic
from medcalc_maintained.core.redact import redact
from medcalc_maintained.verifiers.base import canonical_json, sha256_text


def cache_key(backend: str, model: str, prompt_sha256: str, run: int, settings: str) -> str:
    return sha256_text(canonical_json({"backend": backend, "model": model, "prompt_sha256": prompt_sha256,
                                       "run": int(run), "settings": settings}))


@dataclass
class Entry:
    """A completed call. ``ok`` is False for a reply that stayed malformed after the retries
    (it is kept: it is one ``unparseable`` vote, already paid for)."""

    key: str
    backend: str
    model: str
    prompt_sha256: str
    run: int
    settings: str
    text: str
    ok: bool = True
    problem: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    thoughts_tokens: int = 0
    search_queries: int = 0
    latency_s: float = 0.0
    attempts: int = 1
    batch: bool = False
    model_version: str = ""
    finish_reason: str = ""
    created_at: str = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))

    def __post_init__(self) -> None:
        # every text field of a call record is stored and shown with any secret masked (core.redact):
        # a reply may quote the request's headers in its text, model version or finish reason
        for name in ("text", "problem", "model_version", "finish_reason"):
            setattr(self, name, redact(getattr(self, name)))

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=1) + "\n"


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Cache:
    """Directory ``root/<backend>/<model>/<key[:2]>/<key>.json``."""

    def __init__(self, root: os.PathLike | str):
        self.root = Path(root)

    def path(self, backend: str, model: str, key: str) -> Path:
        return self.root / _SAFE.sub("_", backend) / _SAFE.sub("_", model) / key[:2] / f"{key}.json"

    def get(self, backend: str, model: str, key: str) -> Entry | None:
        p = self.path(backend, model, key)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError):
            return None  # unreadable entry: treated as absent and rewritten
        if data.get("key") != key:
            return None
        known = Entry.__dataclass_fields__
        return Entry(**{k: v for k, v in data.items() if k in known})

    def has(self, backend: str, model: str, key: str) -> bool:
        return self.get(backend, model, key) is not None

    def put(self, entry: Entry) -> Path:
        return write_text_atomic(self.path(entry.backend, entry.model, entry.key), entry.to_json())

    # --- batch jobs submitted but not yet collected (so a killed run resumes polling them) ---
    def jobs_dir(self) -> Path:
        return self.root / "_batch_jobs"

    def job_file(self, name: str) -> Path:
        """The record of batch job ``name``: its name masked (a server may echo the key into it) and
        cut, then a digest of the whole name, so that no secret and no over-long name reaches a file name."""
        digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:16]
        return self.jobs_dir() / f"{_SAFE.sub('_', redact(name))[:64]}-{digest}.json"

    def save_job(self, name: str, record: dict[str, Any]) -> Path:
        return write_text_atomic(self.job_file(name), redact(json.dumps(record, indent=1)) + "\n")

    def load_jobs(self) -> list[dict[str, Any]]:
        d = self.jobs_dir()
        out = []
        if d.is_dir():
            for p in sorted(d.glob("*.json")):
                try:
                    out.append(json.loads(p.read_text(encoding="utf-8")))
                except (OSError, json.JSONDecodeError):
                    continue
        return out

    def drop_job(self, name: str) -> None:
        for p in (self.job_file(name), self.jobs_dir() / f"{_SAFE.sub('_', name)[:200]}.json"):  # and a pre-digest name
            if p.exists():
                p.unlink()
