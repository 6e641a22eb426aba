"""Releases: semantic versions of the maintained benchmark, built as Hugging Face dataset repositories.

``plan``     releases.yaml (:class:`~.plan.Release`, :func:`~.plan.load_releases`)
``tables``   the stored release tables (what a reader imports): the configs' layout and column
             types, the files of stage ``release-tables``, read only when current (:func:`~.tables.load_config`)
``table_builder`` the configs of a release (default, full, original, corrections, mini) built from the
             upstream instances and the ledger (stage ``release-tables`` and ``release build`` only)
``layout``   the files of a built release: data file names, card front matter, manifest, one config read back
``state``    the release state and the next version (:func:`~.state.derive_bump`)
``card``     README.md (from dataset_card.md) and CHANGELOG.md
``build``    one release as a dataset repository directory with its manifest
``semver``   the declared kind must be the derived bump (build and publish), releases published in order
``publish``  a built release to a bare git repository or the Hugging Face Hub
``git``      the one way this package runs git
``upstream`` which upstream version a release is built on; the MAJOR release for a new upstream version
"""
