"""The models' torch side, below every part that builds one: the built-in models' ``nn.Module`` definitions, one
file per family, each ending in the builder functions that the framework-free specs of :mod:`edgebench.workloads`
name as ``model="module:function"``; the layers they share (:mod:`.layers`); a user's ``module:factory`` resolved into
a workload (:mod:`.custom`); and the numeric precision a model's step runs at (:mod:`.precision`).

Why a part of its own: the torch backend trains these models, and the model graph (:mod:`edgebench.graph`: layer
graphs, FLOP and parameter counts, ONNX exports) builds them too, below the backends.  Imports torch, the registry
and the workload specs, nothing else of edgebench."""
