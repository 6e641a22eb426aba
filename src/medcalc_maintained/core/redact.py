"""Secrets never printed: the one function that masks them in text from remote services.

:func:`redact` replaces with ``***``

- the values of the environment variables in :data:`SECRET_VARS` (read at call time; values shorter
  than :data:`MIN_SECRET` characters are ignored, they would mask ordinary words);
- the value of any ``Authorization`` or ``x-goog-api-key`` header (``Name: value``, ``"Name":
  "value"`` or ``'Name': 'value'``, any letter case);
- the value of a ``key=``, ``token=`` or ``access_token=`` query parameter;
- the password of a URL with credentials (``https://user:secret@host``);
- anything shaped like a Google API key (``AIza`` + 35 characters) or a Hugging Face token
  (``hf_`` + 30 or more letters and digits), wherever it appears, set in this process or not.

It is applied wherever remote text can reach the user or the disk: the errors of the Gemini backend
(online and batch), the engine's failure messages, every text field of a call record (reply, model
version, finish reason: ``verifiers.cache.Entry``, from which the call cache and the vote tables are
written), the batch job records and their file names, the command-line error printing, every log
record and every warning (:func:`install_log_filter`) and the publishing and git errors.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

SECRET_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "HF_TOKEN")
MIN_SECRET = 8
MASK = "***"

# Linear time on any text (a 1 MB line is masked in milliseconds): every pattern starts at a fixed
# token or behind a boundary (a run of letters is tried once, at its first character, never at each
# of its characters), and no repeat before a fixed token is unbounded, so a failed try never
# rescans the rest of the text. ``tests/cli/test_hostile_probes.py`` times each against hostile text.
_HEADER = re.compile(
    r"""(?P<name>["']?(?:authorization|proxy-authorization|x-goog-api-key)["']?\s{0,16}[:=]\s{0,16})"""
    r"""(?P<q>["']?)(?P<value>(?:(?:bearer|basic|token)\s{1,16})?[^"'\s,;}\]]+)""",
    re.IGNORECASE)
_QUERY = re.compile(r"(?P<name>[?&;](?:key|api_key|token|access_token)=)(?P<value>[^&#\s\"']+)", re.IGNORECASE)
_KEY_SHAPED = re.compile(r"(?<![A-Za-z0-9_-])(?:AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,})(?![A-Za-z0-9_-])")
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}://[^/\s:@]{0,256}:)(?P<value>[^@/\s]{1,1024})(?=@)",
    re.IGNORECASE)


def secret_values() -> list[str]:
    """The secrets set in the environment now, longest first."""
    vals = {os.environ.get(v, "").strip() for v in SECRET_VARS}
    return sorted((v for v in vals if len(v) >= MIN_SECRET), key=len, reverse=True)


def redact(text: Any) -> str:
    """``text`` (made a string) with every secret value masked."""
    s = "" if text is None else str(text)
    if not s:
        return s
    for v in secret_values():
        s = s.replace(v, MASK)
    s = _KEY_SHAPED.sub(MASK, s)
    s = _HEADER.sub(lambda m: m.group("name") + m.group("q") + MASK, s)
    s = _QUERY.sub(lambda m: m.group("name") + MASK, s)
    return _URL_CREDENTIALS.sub(lambda m: m.group("scheme") + MASK, s)


def _clean(record: logging.LogRecord) -> logging.LogRecord:
    """``record`` with its message (and exception text) masked, formatted once."""
    try:
        message = record.getMessage()
    except Exception:  # a broken format string: the logging module reports it itself
        return record
    record.msg, record.args = redact(message), None
    if record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        record.msg = f"{record.msg} ({type(exc).__name__}: {redact(exc)})"
        record.exc_info, record.exc_text = None, None
    return record


_installed = False


def install_log_filter() -> None:
    """Mask secrets in every log record, whatever logger or handler prints it (libraries such as
    huggingface_hub attach their own handlers): the record factory cleans each record as it is
    made; and in every warning (google-genai warns with the reply's unknown ``finishReason``, which
    a proxy may have filled with the request's headers): the warning's text is masked as it is
    formatted, for stderr and for ``logging.captureWarnings`` alike. Safe to call more than once."""
    global _installed
    if _installed:
        return
    make = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return _clean(make(*args, **kwargs))

    logging.setLogRecordFactory(factory)
    _mask_warnings()
    _installed = True


def _mask_warnings() -> None:
    import warnings

    fmt = warnings.formatwarning

    def formatwarning(message: Any, category: Any, filename: str, lineno: int, line: str | None = None) -> str:
        return redact(fmt(redact(message), category, filename, lineno, line))

    warnings.formatwarning = formatwarning
