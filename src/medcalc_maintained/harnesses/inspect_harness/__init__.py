"""Inspect (``inspect-ai``): the reader of its logs (:mod:`.reader`); its adapter is
:mod:`medcalc_maintained.harnesses.inspect_task`, the file ``inspect eval`` loads."""
