"""Predict a configuration's step time, energy and peak memory on a device from its stored traced trials.

See docs/predict.md.  Reads the store and the backends' static graph features (FLOPs, bytes, calls per layer);
scikit-learn (the ``predict`` extra) is imported only here, never by ``run``.
"""
