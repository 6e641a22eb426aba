"""The project's own tooling, for the people who change the code (nothing the pipeline runs).

``import_graph``  the package's static import graph, read from the source (nothing is imported);
``dvc_deps``      the generated parts of ``dvc.yaml``: every stage's ``${src}`` deps (the import
                  closure of its module) and the header's stage list (``make deps``);
``dvc_lock``      ``dvc.lock`` checked as DVC reads it, and restored from git after a killed
                  ``dvc repro`` (``medcalc-maintained repair-lock``, run by ``make repro``);
``docs_tables``   the stage table of ``docs/pipeline.md``, from ``dvc.yaml`` and the stage modules'
                  imports (``make deps`` writes it with ``dvc.yaml``'s generated parts);
``docstrings``    docstrings as the documentation site shows them (``make docs``: doctests fenced as code).
"""
