"""Planning physician reviews: which rows to review next, and what the reviews so far say about the rest.

It reads the evidence about each label (the recompute audit and the check findings of
:mod:`medcalc_maintained.quality`), which never imports it; the review packets themselves are
:mod:`medcalc_maintained.review`.

``triage``          the queue: every row ranked by the evidence that its label is wrong, routed to reviewers;
``impact``          the queue ordered by expected harm (evidence x the clinical severity of the change);
``requeue``         rows sent back to the top first: policy contradictions, labels no derivation reproduces;
``triage_metrics``  how good the queue is against the adjudicated labels;
``error_model``     ``P(label wrong)`` per row and per-calculator error rates with intervals;
``allocation``      review-allocation policies, batch by batch;
``replay``          the policies replayed against the adjudicated rows;
``simulate``        the ``triage-simulate`` stage's work: calibration, fits per release, the replay's universe.
"""
