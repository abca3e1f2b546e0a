"""Where results live: an SQLite file with a versioned schema, written as each trial finishes."""

from edgebench.store.sqlite import Store, default_store_path

__all__ = ["Store", "default_store_path"]
