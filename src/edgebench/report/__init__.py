"""Presenting results: terminal tables, the seed suite's CSV formats, plots, HTML and traces."""
