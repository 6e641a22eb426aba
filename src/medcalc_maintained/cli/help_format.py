"""How ``--help`` renders, for every command of the CLI (installed once by :mod:`medcalc_maintained.cli`).

The help texts are Markdown (``rich_markup_mode="markdown"``), where ``<yyyy-mm>`` or ``<config>``
reads as an HTML tag and vanished from the rendered help (``data/corrections/-proposals.yaml``).
Placeholders ``<word>`` outside code spans are escaped before rendering, so they show as written.
Boolean flags (``--force``) take no value: their type column stays empty instead of ``<bool>``.
"""

from __future__ import annotations

import re

from typer import core, rich_utils

_PLACEHOLDER = re.compile(r"<(?=[A-Za-z_][^<>\n`]*>)")


def escape_placeholders(text: str) -> str:
    """``text`` with every ``<placeholder>`` outside backtick code spans escaped for Markdown."""
    parts = text.split("`")
    return "`".join(_PLACEHOLDER.sub(r"\\<", p) if i % 2 == 0 else p for i, p in enumerate(parts))


def install() -> None:
    """Patch typer's help rendering once (idempotent)."""
    if getattr(rich_utils, "_medcalc_help", False):
        return
    make_rich_text = rich_utils._make_rich_text
    display_type_rich = core.TyperOption.display_type_rich

    def _make_rich_text(*, text: str, style: str = "", markup_mode):
        if markup_mode == rich_utils.MARKUP_MODE_MARKDOWN:
            text = escape_placeholders(text)
        return make_rich_text(text=text, style=style, markup_mode=markup_mode)

    def _display_type_rich(self, ctx):
        return None if self.is_flag and not self.count else display_type_rich(self, ctx)

    rich_utils._make_rich_text = _make_rich_text
    # setattr: typer's own types have no such attribute to assign (these patch typer's help output)
    setattr(core.TyperOption, "display_type_rich", _display_type_rich)
    setattr(rich_utils, "_medcalc_help", True)
