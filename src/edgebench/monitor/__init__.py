"""The long-running monitor: every available sensor sampled into files on disk, in constant memory."""
