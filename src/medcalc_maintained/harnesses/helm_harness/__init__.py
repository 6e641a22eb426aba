"""HELM: the reader of its run directories (:mod:`.reader`); its adapter is
:mod:`medcalc_maintained.harnesses.helm_scenario` and :mod:`medcalc_maintained.harnesses.helm_run_spec`
(the plugin ``helm-run`` loads) with :mod:`medcalc_maintained.harnesses.helm_model` (the model's configuration)."""
