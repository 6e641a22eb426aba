"""Grading a model's answers: the floor below ``release/``, ``harnesses/``, ``scoring/`` and ``tools/``
(the card's score shift, the adapters, ``evaluate`` and ``regrade`` import it); it imports only
``core/`` and ``calculators/``.

* :mod:`.grade` - the status of one prediction (correct, wrong, abstained, unparsable), its severity,
  and the statistics of a comparison (bootstrap intervals, McNemar);
* :mod:`.graders` - the grading rules of the harnesses side by side (``ours``, ``upstream``, ``helm``,
  ``opencompass``);
* :mod:`.predictions` - reading a model's predictions (JSON Lines or CSV, one per uid);
* :mod:`.prompts` - the system prompt and the chat messages of a row;
* :mod:`.reward` - the one reward (Eq. 2) and its verl / TRL entry points.
"""
