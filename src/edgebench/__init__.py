"""edgebench: benchmark and characterize deep-learning training on edge devices."""

__version__ = "0.1.0"
