"""What counts as a citation in the policy and thresholds files (shared by their tests)."""

from __future__ import annotations

import re

# A citation names where the definition is published, in one of these forms (at least one must
# appear in the text): an author or body with a year, a journal's volume:pages, a DOI, a URL, or a
# named source with the quoted title of its page (MDCalc "Delta Gap").
CITATION_FORMS = {
    "author/body and year": re.compile(r"\b[A-Z][A-Za-z]+\b.*(?<!\d)(1[6-9]\d\d|20\d\d)(?!\d)"),
    "journal volume:pages": re.compile(r"\b[A-Z][a-z]+\b.*\b\d+(?:\(\d+\))?:[a-z]?\d+"),
    "DOI": re.compile(r"\b10\.\d{4,9}/\S+"),
    "URL": re.compile(r"https?://[\w.-]+\.[a-z]{2,}"),
    "named source and title": re.compile(r"\b[A-Z][A-Za-z]+ \"[^\"]{3,}\""),
}


def cites(text: object) -> bool:
    return any(form.search(str(text or "")) for form in CITATION_FORMS.values())
