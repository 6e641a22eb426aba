"""Doctests shown as code on the documentation site (devtools/docstrings.py): the griffe extension of
`make docs` fences them so Markdown neither reflows them nor reads ``x[0][1]`` as a link reference."""

from __future__ import annotations

from medcalc_maintained.devtools.docstrings import fence_doctests


def test_an_indented_doctest_at_the_end_is_fenced_at_its_indentation():
    text = "Summary.\n\n    >>> rows[0][1]\n    'a'"
    assert fence_doctests(text) == "Summary.\n\n    ```pycon\n    >>> rows[0][1]\n    'a'\n    ```"


def test_two_blocks_each_fenced_and_text_already_fenced_left_alone():
    text = "```python\n>>> kept\n```\n\n>>> a\n1\n\nbetween\n\n>>> b\n"
    assert fence_doctests(text) == ("```python\n>>> kept\n```\n\n```pycon\n>>> a\n1\n```\n\nbetween\n\n"
                                    "```pycon\n>>> b\n```\n")


def test_a_docstring_without_a_doctest_is_unchanged():
    text = "A list [a, b] and ``code``.\n\n* one\n* two"
    assert fence_doctests(text) == text
