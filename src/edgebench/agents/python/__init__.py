"""The Python agent (``python -m edgebench.agents.python.agent``) and what it runs on the device: the worker (one
trial in one process), its stopping rules, the idle baseline, memory budgets and out-of-memory causes, and the
feasibility plan of models x batch sizes under a budget."""
