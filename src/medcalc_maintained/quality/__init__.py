"""Evidence about one label: is it what its own features, its note and its declared definition give?

``recompute``    the label re-derived from the row's own extracted features;
``checks``       the zero-LLM checks of the note, the values and the label (one registry, rules as data);
``definitions``  the definition policy at work: definition findings, policy contradictions;
``agreement``    agreement of label sets with the blinded physician labels.

Planning which rows physicians review next is :mod:`medcalc_maintained.planning`, which stands on
this package (never the reverse); the ledger reads findings as plain fields and imports nothing here.
"""
