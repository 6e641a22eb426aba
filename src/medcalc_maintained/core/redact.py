"""Secrets never printed: the one function that masks them in text from remote services.

:func:`redact` replaces with ``***``

- the values of the environment variables in :data:`SECRET_VARS` (read at call time; values shorter
  than :data:`MIN_SECRET` characters are ignored, they would mask ordinary words);
- the value of any ``Authorization`` or ``x-goog-api-key`` header (``Name: value``, ``"Name":
  "value"`` or ``'Name': 'value'``, any letter case);
- the value of a ``key=``, ``token=`` or ``access_token=`` query parameter;
- the password of a URL with credentials (``https://user:secret@host``).

It is applied wherever remote text can reach the user or the disk: the errors of the Gemini backend
(online and batch), the engine's failure messages, the call cache, the run records and vote tables,
the command-line error printing, the log handlers (:func:`install_log_filter`) and the publishing
and git errors.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

SECRET_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "HF_TOKEN")
MIN_SECRET = 8
MASK = "***"

_HEADER = re.compile(
    r"""(?P<name>["']?(?:authorization|proxy-authorization|x-goog-api-key)["']?\s*[:=]\s*)"""
    r"""(?P<q>["']?)(?P<value>(?:bearer\s+|basic\s+|token\s+)?[^"'\s,;}\]]+)""", re.IGNORECASE)
_QUERY = re.compile(r"(?P<name>[?&;](?:key|api_key|token|access_token)=)(?P<value>[^&#\s\"']+)", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://[^/\s:@]*:)(?P<value>[^@/\s]+)(?=@)", re.IGNORECASE)


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
    s = _HEADER.sub(lambda m: m.group("name") + m.group("q") + MASK, s)
    s = _QUERY.sub(lambda m: m.group("name") + MASK, s)
    return _URL_CREDENTIALS.sub(lambda m: m.group("scheme") + MASK, s)


class RedactingFilter(logging.Filter):
    """A log filter that masks secrets in the formatted message of every record it passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep the record as it is
            return True
        clean = redact(message)
        if clean != message or record.args:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            record.msg = f"{record.msg} ({type(record.exc_info[1]).__name__}: {redact(record.exc_info[1])})"
            record.exc_info, record.exc_text = None, None
        return True


_FILTER = RedactingFilter()


def install_log_filter() -> None:
    """Mask secrets in everything the ``logging`` module prints (root handlers and the fallback
    handler used when none is configured); safe to call more than once."""
    handlers = list(logging.getLogger().handlers)
    if logging.lastResort is not None:
        handlers.append(logging.lastResort)
    for h in handlers:
        if _FILTER not in h.filters:
            h.addFilter(_FILTER)
