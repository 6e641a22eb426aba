"""A griffe extension of the documentation build (mkdocs.yml): every docstring's doctests fenced as code
(``medcalc_maintained.devtools.docstrings.fence_doctests``), so Markdown renders them as written."""

from __future__ import annotations

from typing import Any

from griffe import Extension, Object

from medcalc_maintained.devtools.docstrings import fence_doctests


class FenceDoctests(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
