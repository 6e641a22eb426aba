"""A local Hugging Face Hub mirror for tests: olah on 127.0.0.1, offline, serving git repositories
from ``<mirrors>/datasets/<org>/<name>`` (``mirrors`` defaults to ``<workdir>/mirrors``)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pandas as pd


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def olah(workdir: Path, repo_id: str, ready_revision: str, timeout_s: float = 60, mirrors: Path | None = None
         ) -> Iterator[str]:
    """Start olah in ``workdir`` (its configuration, cache and logs go there), serving the mirrors
    under ``mirrors`` (read only), wait until ``repo_id`` answers at ``ready_revision``, yield its
    URL, and stop it on exit (a failed start raises with olah's log)."""
    exe = Path(sys.executable).parent / "olah-cli"
    if not exe.exists():
        raise RuntimeError("olah is not installed (it is a dev dependency: pip install -e '.[dev]')")
    port = free_port()
    conf = workdir / "olah.toml"
    conf.write_text(textwrap.dedent(f"""\
        [basic]
        host = "127.0.0.1"
        port = {port}
        repos-path = "{workdir / 'olah-repos'}"
        mirrors-path = ["{mirrors or workdir / 'mirrors'}"]
        hf-scheme = "http"
        hf-netloc = "127.0.0.1:9"
        hf-lfs-netloc = "127.0.0.1:9"
        [accessibility]
        offline = true
        """))
    log_path = workdir / "olah.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([str(exe), "-c", str(conf), "--log-path", str(workdir / "olah-logs")],
                                cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + timeout_s
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/api/datasets/{repo_id}/revision/{ready_revision}",
                                                timeout=2) as resp:
                        assert resp.status == 200
                        break
                except OSError:
                    if proc.poll() is not None or time.time() > deadline:
                        raise RuntimeError("olah did not start:\n" + log_path.read_text()) from None
                    time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True).stdout.strip()


LOAD = """
import json, sys
import datasets
out = {}
for config, rev in json.loads(sys.argv[1]):
    ds = datasets.load_dataset("org/medcalc-maintained", config, revision=rev, split="test")
    out[f"{config}@{rev}"] = ds.to_pandas().to_dict("list")
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump(out, f)
"""


def load_through_hub(url: str, home: Path, requests: list[tuple[str, str]]) -> dict[str, pd.DataFrame]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_ENDPOINT=url, HF_HOME=str(home), HF_HUB_OFFLINE="0", HF_DATASETS_OFFLINE="0",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1", HF_DATASETS_DISABLE_PROGRESS_BARS="1")
    # the tables come back in a file, not on stdout: a run under load once returned its ~10 MB line cut short (exit 0)
    home.mkdir(parents=True, exist_ok=True)
    got = home / "loaded.json"
    proc = subprocess.run([sys.executable, "-c", LOAD, json.dumps(requests), str(got)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {k: pd.DataFrame(v) for k, v in json.loads(got.read_text(encoding="utf-8")).items()}
