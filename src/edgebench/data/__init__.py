"""Training data: synthetic batches by default, small real datasets that ship offline for accuracy runs."""
