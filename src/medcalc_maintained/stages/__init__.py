"""One module per ``dvc.yaml`` stage, named after it (``import-campaign`` is ``import_campaign``).

Each exposes ``run(project, ...)``: the stage's whole work, reading its inputs from and writing
its outputs to the paths of :class:`~medcalc_maintained.project.Project`. The command line only
parses arguments, calls ``run`` and prints what it returns.
"""
