"""Releases: semantic versions of the maintained benchmark, built as Hugging Face dataset repositories.

``plan``     releases.yaml (:class:`~.plan.Release`, :func:`~.plan.load_releases`)
``tables``   the configs of a release (default, full, original, corrections) from the upstream
             instances and the ledger; the files of stage ``release-tables``; :func:`~.tables.load_config`
``state``    the release state and the next version (:func:`~.state.derive_bump`)
``card``     README.md (from dataset_card.md) and CHANGELOG.md
``build``    one release as a dataset repository directory with its manifest
``semver``   the declared kind must be the derived bump (build and publish), releases published in order
``publish``  a built release to a bare git repository or the Hugging Face Hub
``git``      the one way this package runs git
``upstream`` which upstream version a release is built on; the MAJOR release for a new upstream version
"""
