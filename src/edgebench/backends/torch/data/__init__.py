"""Torch batches for the tasks: synthetic inputs and labels, and the epoch sampler over a real dataset."""
