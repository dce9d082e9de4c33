"""The claim-audit harness. Its packages are its layers; a layer imports only itself and the layers before it
in :data:`LAYERS` (``tests/unit/test_layers.py`` reads every import and checks it; docs/architecture.md
draws them)."""

#: The layers, from the floor up: ``(package, what it holds)``. The files of one protocol's folder
#: (``protocols/<name>/``) serve several layers and are placed by name in :data:`PROTOCOL_FILES`;
#: the modules at the top of the package (the command line) sit above every layer.
LAYERS = (
    ("stats", "the re-implementation, from the paper's equations"),
    ("core", "folders, errors, schemas, atomic writes, the record, the data lock, the build's lock"),
    ("parallel", "every independent unit of work as a task, on local processes or a Dask cluster"),
    ("protocols", "the interface a protocol fills in, and each protocol's measurement"),
    ("claimfiles", "reading a claim file into typed objects; the registry of protocols"),
    ("authors", "the authors' code at its pinned commit, each request run confined and cached"),
    ("verdicts", "targets and controls judged, and the verdict rule"),
    ("resampling", "the bootstrap and its decisions, the coverage studies, the multiverse"),
    ("rendering", "reports, figures, the index and the studies' files, from records alone"),
    ("build", "one claim's run, what is stale and why, one pool for the whole build"),
)
#: The layer of a file in a protocol's folder, by its name (any other file there is in ``protocols``).
PROTOCOL_FILES = {"adapter.py": "authors", "results.py": "rendering", "figures.py": "rendering"}
