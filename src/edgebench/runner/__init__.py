"""Running trials: the worker (one trial in one process) and the launchers that start it."""
