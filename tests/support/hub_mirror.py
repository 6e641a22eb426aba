"""A local Hugging Face Hub mirror for tests: olah on 127.0.0.1, offline, serving git repositories
from ``<mirrors>/datasets/<org>/<name>`` (``mirrors`` defaults to ``<workdir>/mirrors``)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Iterator


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
