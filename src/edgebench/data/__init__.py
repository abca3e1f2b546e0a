"""Small real datasets that ship offline for accuracy runs (the synthetic batches are the backend's:
:mod:`edgebench.backends.torch.data`)."""
