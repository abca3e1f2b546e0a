"""DNNTune's deployment analyzer: where to split a model between the device and a server (issue 14).

It cuts the model graph's layer graph (:mod:`edgebench.graph.layer_graph`: layer calls in execution order and the
tensors that flow between them, recorded by :mod:`edgebench.graph`); ``network`` holds the link profiles, ``costs``
the per-layer cost table from stored traced trials, ``solver`` every cut's latency and device energy and the DAG's
best cut (DADS, a minimum cut by networkx's max-flow), ``sweep`` where the best point moves as bandwidth changes.
Nothing here imports torch: the graph comes as plain data.
"""
