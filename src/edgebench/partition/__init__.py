"""DNNTune's deployment analyzer: where to split a model between the device and a server (issue 14).

``graph`` is the framework-free record of a forward pass (layer calls in execution order and the tensors that
flow between them), ``network`` the link profiles, ``costs`` the per-layer cost table from stored traced trials,
``solver`` every cut's latency and device energy, ``mincut`` the DAG's best cut (DADS), ``sweep`` where the best
point moves as bandwidth changes.  Nothing here imports torch: the backend hands the graph over as plain data.
"""
