"""Scoring models against labels (paper section 4); the grading of one answer, the prompts and the
reward are :mod:`medcalc_maintained.grading`.

* :mod:`.labels` - the labels of a release and the label sets of ``evaluate`` (the one reader);
* :mod:`.evaluate` - grade predictions under several label sets (bootstrap, McNemar, chart);
* :mod:`.regrade` - a harness's saved results reproduced, then re-scored by ``evaluate``;
* :mod:`.arms` - the two GRPO training arms (verl and TRL rows);
* :mod:`.noise` - reward flips between two label sets;
* :mod:`.train` - GRPO training of one arm with TRL (optional ``train`` extra).
"""
