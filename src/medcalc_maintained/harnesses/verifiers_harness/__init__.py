"""verifiers: the reader of its results directories (:mod:`.reader`); its adapter is
:mod:`medcalc_maintained.harnesses.verifiers_env`, the environment ``vf-eval`` loads by that name."""
