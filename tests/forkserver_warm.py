"""Imported once by the fork server of tests/test_ledger_concurrency.py: loads the package's cached
tables (calculator policy, output ranges, built-in defaults) so that each forked command starts warm."""

import medcalc_maintained.cli  # noqa: F401
import medcalc_maintained.ledger.propose  # noqa: F401
import medcalc_maintained.review.workflow  # noqa: F401
from medcalc_maintained import project
from medcalc_maintained.calculators.policy import load_policy
from medcalc_maintained.calculators.ranges import output_ranges

load_policy()
output_ranges()
project._defaults()
