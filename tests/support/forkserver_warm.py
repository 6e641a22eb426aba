"""Imported once by the fork server of tests/e2e/ledger/test_ledger_concurrency.py: loads the package's cached
tables (calculator policy, output ranges, severity thresholds, built-in defaults) so that each forked
command starts warm; and imports what a command otherwise imports on its first run (typer's option
adapters with pydantic, pyarrow's dataset reader and pandas conversion, the ledger schema package)."""

import pyarrow.dataset  # noqa: F401
import pyarrow.pandas_compat  # noqa: F401
import pydantic.plugin._loader  # noqa: F401
import rich._emoji_codes  # noqa: F401
import typer._adapters  # noqa: F401
import typer._click.decorators  # noqa: F401

import medcalc_maintained.cli  # noqa: F401
import medcalc_maintained.ledger.propose  # noqa: F401
import medcalc_maintained.review.workflow  # noqa: F401
import medcalc_maintained.schemas  # noqa: F401
from medcalc_maintained import project
from medcalc_maintained.calculators.policy import load_policy
from medcalc_maintained.calculators.ranges import output_ranges
from medcalc_maintained.calculators.thresholds import thresholds

load_policy()
output_ranges()
thresholds()
project._defaults()
