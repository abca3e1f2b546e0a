"""The native sampler: ``sampler.c``, the sh sampler's loop as a small static program, built per device ABI.

``build`` compiles it with Zig's C compiler from pip and keeps each build in the cache of derived files; the
``--command`` agent pushes it to a device (:mod:`edgebench.agents.sh.native`), the Python agent runs it here
(``process``).  Its records are the sh sampler's (text) or the Python sampler's (``--raw``), so whoever reads them
cannot tell the samplers apart but by the name recorded beside them.
"""
