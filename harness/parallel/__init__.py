"""Fan-out: every independent unit of work as a task, on local processes or a Dask cluster."""
