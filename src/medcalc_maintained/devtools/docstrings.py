"""Docstrings as the documentation site renders them (``make docs``: mkdocstrings reads them as Markdown).

The docstrings hold doctests (``>>> ...`` and the expected output), which pytest runs. Markdown would
read such a block as a paragraph, its ``x[0][1]`` as a link reference, so :func:`fence_doctests` puts
each block in a fenced ``pycon`` code block first: the griffe extension ``docs/extensions/doctests.py``
calls it on every docstring it loads. The source files are not changed.
"""

from __future__ import annotations

FENCE = "```"


def fence_doctests(text: str) -> str:
    """``text`` with each doctest block (a line starting with ``>>>``, up to the next blank line) inside
    a fenced ``pycon`` code block at its indentation; text already fenced is left alone.

    >>> fence_doctests("Intro.\\n\\n>>> f([1][0])\\n1\\n\\nEnd.").splitlines()
    ['Intro.', '', '```pycon', '>>> f([1][0])', '1', '```', '', 'End.']
    """
    out: list[str] = []
    fenced = in_block = False
    indent = ""
    for line in text.split("\n"):
        stripped = line.lstrip()
        if in_block and not stripped:
            out.append(f"{indent}{FENCE}")
            in_block = False
        elif not in_block and stripped.startswith(FENCE):
            fenced = not fenced
        elif not in_block and not fenced and stripped.startswith(">>>"):
            indent = line[:len(line) - len(stripped)]
            out.append(f"{indent}{FENCE}pycon")
            in_block = True
        out.append(line)
    if in_block:
        out.append(f"{indent}{FENCE}")
    return "\n".join(out)
