"""The model graph: what a model is, read without running it on the device, below the parts that need it.

``partition`` cuts a model's layer graph, ``predict`` learns from its static features, the runtimes (ONNX Runtime,
MNN) build their models from its ONNX export and map their profiles back to its modules, and ``edgebench models``
shows its FLOP and parameter counts; none of these is a runtime, so they live here, below ``backends/`` (which holds
only the runtimes), not in it.

- the layer graph: :mod:`.layer_graph` (plain data, what the solver cuts), recorded from a torch forward pass
  (:mod:`.torch_graph`) or read from a model file's ONNX graph (:mod:`.onnx_graph`);
- a torch model's modules as every layer table labels them, and the autograd nodes each module call makes
  (:mod:`.modules`); each module's FLOPs and bytes per step (:mod:`.layer_costs`); the static features of a
  configuration never run (:mod:`.static`); whole-model FLOP and parameter counts (:mod:`.flops`) and the counts as
  plain data, cached (:mod:`.counts`);
- ONNX: a zoo model's export (:mod:`.export`), a file's protobuf read without the onnx package (:mod:`.onnx_proto`),
  node names mapped back to modules (:mod:`.scopes`);
- the caches of files derived from the built-in models (:mod:`.cache`: the folder and the code's fingerprint;
  :mod:`.graph_cache`, layer graphs).

Imports torch (and onnx) only inside the modules that build a model, and only when they do; the plain records
(:mod:`.layer_graph`, :mod:`.counts`, :mod:`.onnx_proto`, :mod:`.scopes`) import neither.
"""
