"""Scoring models against labels (paper section 4).

* :mod:`.reward` - the one reward (Eq. 2) and its verl / TRL entry points;
* :mod:`.prompts` - the system prompt and the chat messages of a row;
* :mod:`.labels` - the labels of a release and the label sets of ``evaluate`` (the one reader);
* :mod:`.evaluate` - grade predictions under several label sets (bootstrap, McNemar, chart);
* :mod:`.arms` - the two GRPO training arms (verl and TRL rows);
* :mod:`.noise` - reward flips between two label sets;
* :mod:`.train` - GRPO training of one arm with TRL (optional ``train`` extra).
"""
