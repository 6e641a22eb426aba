"""The project's own tooling, for the people who change the code (nothing the pipeline runs).

``import_graph``  the package's static import graph, read from the source (nothing is imported);
``dvc_deps``      the generated parts of ``dvc.yaml``: every stage's ``${src}`` deps (the import
                  closure of its module) and the header's stage list (``make deps``).
"""
