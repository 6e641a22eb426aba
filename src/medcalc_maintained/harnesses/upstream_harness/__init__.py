"""MedCalc-Bench's own ``evaluation/run.py``: the reader of its output (:mod:`.reader`); no adapter
(it runs upstream's code on upstream's dataset)."""
