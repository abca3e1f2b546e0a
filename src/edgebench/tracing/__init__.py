"""Layer and op spans recorded inside the worker with low overhead, and the table they are stored as.

``layers`` (:mod:`edgebench.tracing.layers`) hooks every ``nn.Module`` and the autograd nodes each leaf module
creates; ``ops`` (:mod:`edgebench.tracing.ops`) converts torch.profiler's aten-op events.  Both produce a
:class:`edgebench.tracing.spans.SpanTable`, stored with the trial as the ``spans`` series.
"""
