"""lm-evaluation-harness: the reader of its saved samples (:mod:`.reader`); its adapter is
:mod:`medcalc_maintained.harnesses.lm_eval_task`, the module the task directories it writes import."""
