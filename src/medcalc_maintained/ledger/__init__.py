"""The corrections ledger: records (read, check, write), their application, and their sources.

``records`` reads and writes ledger files; ``apply`` replays accepted records over the upstream
labels; ``campaign`` turns the published audit workbooks into records; ``propose`` appends a
contributor's proposal.
"""

from medcalc_maintained.core.versions import UNRELEASED
from medcalc_maintained.ledger.records import (
    DECISIONS,
    ERROR_TYPES,
    SOURCES,
    STATUSES,
    LedgerError,
    LedgerProblem,
    Record,
    collect,
    dump,
    load,
    read_file,
    records_frame,
    schema,
)

__all__ = [
    "DECISIONS", "ERROR_TYPES", "SOURCES", "STATUSES", "UNRELEASED", "LedgerError", "LedgerProblem", "Record",
    "collect", "dump", "load", "read_file", "records_frame", "schema",
]
