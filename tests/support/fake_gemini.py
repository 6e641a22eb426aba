"""A local HTTP server, written for the tests, that speaks the Gemini REST protocol.

It answers the endpoints the real google-genai client calls for the Gemini Developer API:

    POST /{version}/models/{model}:generateContent
    POST /{version}/models/{model}:batchGenerateContent     (client.batches.create, inline requests)
    GET  /{version}/batches/{id}                            (client.batches.get)

Replies are scripted by a ``responder(request_json) -> reply text`` callable. Faults are injected
by a :class:`FaultPlan`: 429 (with a RetryInfo delay), 500, 503, a hang longer than the client's
timeout, a dropped connection, a truncated JSON body, and a well-formed reply without an answer
tag. The plan is deterministic per request key and attempt, and never faults one key more than
``max_consecutive`` times in a row.

A misconfigured proxy is imitated with ``echo_headers=True`` (every error body quotes the
request's headers, API key included, as some proxies do) and ``fail_status=CODE`` (every request
answered with that HTTP error); the bodies sent that quoted a header are kept in ``stats.echoed``.
With ``echo_headers_ok=True`` a *successful* (200) reply quotes the request's headers in its
``modelVersion`` and at the end of its text (online and batch), as a broken gateway might.

The server binds 127.0.0.1 only, serves from daemon threads, and shuts itself down after
``max_lifetime_s`` even if a test forgets to stop it. It counts, per request key
``(sha256 of system+user text, seed)``: attempts, faults, and *successful* calls (a good reply
written completely to the socket).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

FAULTS = ("429", "500", "503", "timeout", "drop", "malformed_json", "no_tag")


def request_texts(req: dict[str, Any]) -> tuple[str, str]:
    """(system, user) texts of a generateContent request body."""
    system = "".join(p.get("text", "") for p in (req.get("systemInstruction") or {}).get("parts", []))
    user = "".join(p.get("text", "") for c in req.get("contents", []) for p in c.get("parts", []))
    return system, user


def request_seed(req: dict[str, Any]) -> int | None:
    return (req.get("generationConfig") or {}).get("seed")


def request_key(req: dict[str, Any]) -> tuple[str, int | None]:
    system, user = request_texts(req)
    return hashlib.sha256(f"{system}\n\n{user}".encode()).hexdigest(), request_seed(req)


@dataclass
class FaultPlan:
    rate: float = 0.0
    kinds: tuple[str, ...] = FAULTS
    seed: int = 0
    max_consecutive: int = 2

    def decide(self, key: tuple, attempt: int, consecutive: int) -> str | None:
        if self.rate <= 0 or consecutive >= self.max_consecutive:
            return None
        rng = random.Random(f"{self.seed}|{key}|{attempt}")
        if rng.random() < self.rate:
            return rng.choice(self.kinds)
        return None


@dataclass
class Stats:
    attempts: Counter = field(default_factory=Counter)
    successes: Counter = field(default_factory=Counter)
    faults: Counter = field(default_factory=Counter)  # kind -> count
    consecutive: Counter = field(default_factory=Counter)
    batch_jobs: int = 0
    batch_items: int = 0
    batch_gets: int = 0
    paths: list = field(default_factory=list)
    echoed: list = field(default_factory=list)  # error bodies that quoted the request headers


def _response_json(text: str, req: dict[str, Any], model: str, version: str | None = None) -> dict[str, Any]:
    system, user = request_texts(req)
    cand: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
    tools = req.get("tools") or []
    if any("googleSearch" in t or "google_search" in t for t in tools):
        cand["groundingMetadata"] = {"webSearchQueries": ["calculator definition"]}
    prompt_tokens = max(1, (len(system) + len(user)) // 4)
    out_tokens = max(1, len(text) // 4)
    return {
        "candidates": [cand],
        "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": out_tokens,
                          "thoughtsTokenCount": 50, "totalTokenCount": prompt_tokens + out_tokens + 50},
        "modelVersion": version or model,
    }


class FakeGemini:
    """``with FakeGemini(responder, latency_s=0.2, faults=FaultPlan(0.2)) as srv: srv.url``"""

    def __init__(self, responder: Callable[[dict[str, Any]], str], *, latency_s: float = 0.0,
                 faults: FaultPlan | None = None, hang_s: float = 2.0, batch_polls: int = 2,
                 batch_faults: FaultPlan | None = None, max_lifetime_s: float = 900.0,
                 echo_headers: bool = False, fail_status: int | None = None, echo_headers_ok: bool = False,
                 echo_headers_finish: bool = False):
        self.echo_headers = echo_headers
        self.echo_headers_ok = echo_headers_ok
        self.echo_headers_finish = echo_headers_finish
        self.fail_status = fail_status
        self.responder = responder
        self.latency_s = latency_s
        self.faults = faults or FaultPlan()
        self.batch_faults = batch_faults or FaultPlan()
        self.hang_s = hang_s
        self.batch_polls = batch_polls
        self.max_lifetime_s = max_lifetime_s
        self.stats = Stats()
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.released.set()
        self.jobs: dict[str, dict[str, Any]] = {}
        self.httpd: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []

    # -- control ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_port}"

    def hold(self) -> None:
        """Stop writing replies (requests in flight wait) until :meth:`release`."""
        self.released.clear()

    def release(self) -> None:
        self.released.set()

    def start(self) -> "FakeGemini":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                server._post(self)

            def do_GET(self) -> None:  # noqa: N802
                server._get(self)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # socketserver's default backlog of 5 drops connections at high concurrency
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        t = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        t.start()
        watchdog = threading.Timer(self.max_lifetime_s, self.stop)
        watchdog.daemon = True
        watchdog.start()
        self._threads = [t]
        self._watchdog = watchdog
        return self

    def stop(self) -> None:
        self.released.set()
        if self.httpd is not None:
            httpd, self.httpd = self.httpd, None
            httpd.shutdown()
            httpd.server_close()
        wd = getattr(self, "_watchdog", None)
        if wd is not None:
            wd.cancel()

    def __enter__(self) -> "FakeGemini":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- helpers ---------------------------------------------------------------------------
    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str = "application/json",
              headers: dict[str, str] | None = None) -> bool:
        try:
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(body)
            h.wfile.flush()
            return True
        except OSError:
            return False

    @staticmethod
    def _error(code: int, status: str, message: str, details: list | None = None) -> bytes:
        err: dict[str, Any] = {"code": code, "message": message, "status": status}
        if details:
            err["details"] = details
        return json.dumps({"error": err}).encode()

    @staticmethod
    def _peer_closed(h: BaseHTTPRequestHandler) -> bool:
        """Whether the client has gone (e.g. its process was killed while this reply was held)."""
        try:
            return h.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    @staticmethod
    def _drop(h: BaseHTTPRequestHandler) -> None:
        h.close_connection = True
        try:
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    STATUS = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
              503: "UNAVAILABLE"}

    def _message(self, h: BaseHTTPRequestHandler | None, text: str, headers: dict | None = None) -> str:
        """``text``, followed by the request headers when the server echoes them."""
        if not self.echo_headers:
            return text
        quoted = headers if headers is not None else dict(h.headers.items()) if h is not None else {}
        msg = f"{text}; request headers: {json.dumps(quoted)}"
        with self.lock:
            self.stats.echoed.append(msg)
        return msg

    def _ok_reply(self, text: str, req: dict[str, Any], model: str, headers: dict) -> dict[str, Any]:
        """A 200 reply; with ``echo_headers_ok`` its model version and text quote ``headers``; with
        ``echo_headers_finish`` its ``finishReason`` does (an unknown value: google-genai warns with it)."""
        if self.echo_headers_finish:
            quoted = f"STOP request headers: {json.dumps(headers)}"
            with self.lock:
                self.stats.echoed.append(quoted)
            reply = _response_json(text, req, model)
            reply["candidates"][0]["finishReason"] = quoted
            return reply
        if not self.echo_headers_ok:
            return _response_json(text, req, model)
        quoted = f"request headers: {json.dumps(headers)}"
        with self.lock:
            self.stats.echoed.append(quoted)
        return _response_json(f"{text}\n{quoted}", req, model, version=f"{model} ({quoted})")

    def _fail_all(self, h: BaseHTTPRequestHandler) -> bool:
        """Answer with ``fail_status`` (the body echoing the headers when asked); False when off."""
        if self.fail_status is None:
            return False
        code = self.fail_status
        self._send(h, code, self._error(code, self.STATUS.get(code, "UNKNOWN"), self._message(h, f"status {code}")))
        return True

    def _read(self, h: BaseHTTPRequestHandler) -> dict[str, Any]:
        n = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(n) if n else b"{}"
        return json.loads(raw or b"{}")

    # -- endpoints -------------------------------------------------------------------------
    def _post(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        with self.lock:
            self.stats.paths.append(("POST", path))
        m = re.match(r"^/[^/]+/models/([^/:]+):(generateContent|batchGenerateContent)$", path)
        if not m:
            self._send(h, 404, self._error(404, "NOT_FOUND", f"unknown path {path}"))
            return
        try:
            req = self._read(h)
        except (ValueError, OSError):
            self._send(h, 400, self._error(400, "INVALID_ARGUMENT", "body is not JSON"))
            return
        if h.headers.get("x-goog-api-key") in (None, ""):
            self._send(h, 401, self._error(401, "UNAUTHENTICATED", "API key missing"))
            return
        if self._fail_all(h):
            return
        model = m.group(1)
        if m.group(2) == "batchGenerateContent":
            self._create_batch(h, model, req)
        else:
            self._generate(h, model, req)

    def _generate(self, h: BaseHTTPRequestHandler, model: str, req: dict[str, Any]) -> None:
        key = request_key(req)
        with self.lock:
            attempt = self.stats.attempts[key]
            self.stats.attempts[key] += 1
            fault = self.faults.decide(key, attempt, self.stats.consecutive[key])
            if fault:
                self.stats.consecutive[key] += 1
                self.stats.faults[fault] += 1
            else:
                self.stats.consecutive[key] = 0
        if self.latency_s:
            time.sleep(self.latency_s)
        if fault == "timeout":
            time.sleep(self.hang_s)
            self._drop(h)
            return
        if fault == "drop":
            self._drop(h)
            return
        if not self.released.wait(timeout=self.max_lifetime_s) or self._peer_closed(h):
            return
        if fault in ("429", "500", "503"):
            code = int(fault)
            status = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[code]
            details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.01s"}] if code == 429 else None
            self._send(h, code, self._error(code, status, self._message(h, f"injected {code}"), details))
            return
        if fault == "malformed_json":
            self._send(h, 200, b'{"candidates": [{"content": {"parts": [{"text": "trunc')
            return
        text = self.responder(req)
        if fault == "no_tag":
            text = re.sub(r"</?(answer|verdict)>", "", text)
        body = json.dumps(self._ok_reply(text, req, model, dict(h.headers.items()))).encode()
        if self._send(h, 200, body) and fault is None:
            with self.lock:
                self.stats.successes[key] += 1

    def _create_batch(self, h: BaseHTTPRequestHandler, model: str, req: dict[str, Any]) -> None:
        batch = req.get("batch") or {}
        items = ((batch.get("inputConfig") or {}).get("requests") or {}).get("requests") or []
        if not items:
            self._send(h, 400, self._error(400, "INVALID_ARGUMENT", "no inline requests"))
            return
        job_id = uuid.uuid4().hex[:12]
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with self.lock:
            self.stats.batch_jobs += 1
            self.jobs[job_id] = {"model": model, "items": items, "polls": 0, "display": batch.get("displayName", ""),
                                 "created": now, "output": None, "headers": dict(h.headers.items())}
        self._send(h, 200, json.dumps(self._job_json(job_id)).encode())

    def _job_json(self, job_id: str) -> dict[str, Any]:
        job = self.jobs[job_id]
        done = job["output"] is not None
        meta: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": f"models/{job['model']}", "displayName": job["display"], "createTime": job["created"],
            "updateTime": job["created"],
            "state": "BATCH_STATE_SUCCEEDED" if done else ("BATCH_STATE_RUNNING" if job["polls"] else "BATCH_STATE_PENDING"),
        }
        if done:
            meta["endTime"] = job["created"]
            meta["output"] = {"inlinedResponses": {"inlinedResponses": job["output"]}}
        out: dict[str, Any] = {"name": f"batches/{job_id}", "metadata": meta}
        if done:
            out["done"] = True
        return out

    def _run_job(self, job_id: str) -> None:
        job = self.jobs[job_id]
        output = []
        for item in job["items"]:
            req = item.get("request") or {}
            key = request_key(req)
            with self.lock:
                attempt = self.stats.attempts[key]
                self.stats.attempts[key] += 1
                fault = self.batch_faults.decide(key, attempt, self.stats.consecutive[key])
                self.stats.consecutive[key] = self.stats.consecutive[key] + 1 if fault else 0
                if fault:
                    self.stats.faults[fault] += 1
                self.stats.batch_items += 1
            entry: dict[str, Any] = {}
            if item.get("metadata") is not None:
                entry["metadata"] = item["metadata"]
            if fault in ("429", "500", "503", "timeout", "drop"):
                entry["error"] = {"code": 13, "message": self._message(None, f"injected {fault}", job["headers"])}
            else:
                text = self.responder(req)
                if fault in ("no_tag", "malformed_json"):
                    text = re.sub(r"</?(answer|verdict)>", "", text)
                entry["response"] = self._ok_reply(text, req, job["model"], job["headers"])
                if not fault:
                    with self.lock:
                        self.stats.successes[key] += 1
            output.append(entry)
        job["output"] = output

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        with self.lock:
            self.stats.paths.append(("GET", path))
            self.stats.batch_gets += 1
        if self._fail_all(h):
            return
        m = re.match(r"^/[^/]+/batches/([^/:]+)$", path)
        if not m or m.group(1) not in self.jobs:
            self._send(h, 404, self._error(404, "NOT_FOUND", f"unknown batch {path}"))
            return
        job_id = m.group(1)
        with self.lock:
            job = self.jobs[job_id]
            job["polls"] += 1
            ready = job["output"] is None and job["polls"] >= self.batch_polls
        if ready:
            self._run_job(job_id)
        self._send(h, 200, json.dumps(self._job_json(job_id)).encode())


def serve_forever_cli() -> None:  # pragma: no cover - manual use: python fake_gemini.py
    srv = FakeGemini(lambda req: "<answer>1</answer>", latency_s=0.2, max_lifetime_s=600).start()
    print(srv.url, flush=True)
    try:
        while srv.httpd is not None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":  # pragma: no cover
    serve_forever_cli()
