"""The span table every tracer produces (:class:`edgebench.tracing.spans.SpanTable`), framework-free.

The tracers themselves hook a framework and live in its backend: for torch, ``layers``
(:mod:`edgebench.backends.torch.tracing.layers`) hooks every ``nn.Module`` and the autograd nodes each leaf module
creates, and ``ops`` (:mod:`edgebench.backends.torch.tracing.ops`) converts torch.profiler's aten-op events.  The
table is stored with the trial as the ``spans`` series.
"""
