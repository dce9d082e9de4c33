"""Fan-out: every independent unit of work as a task, on local processes or a Dask cluster, in an order that
changes no byte of any output."""
