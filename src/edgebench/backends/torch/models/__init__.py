"""The torch definitions of the workloads (``nn.Module`` classes), one file per family, each ending in the builder
functions that the framework-free specs of :mod:`edgebench.workloads` name as ``model="module:function"``."""
