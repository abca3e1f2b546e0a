"""A transformer's layers by kind, by module type: declared once, framework-free, for the layer table's by-kind sums
(:func:`edgebench.measure.layers.by_kind`) and the predictor's layer families (:mod:`edgebench.predict.model`)."""

from __future__ import annotations

#: The zoo's decoder and encoder's module types, and torch's own, by kind.
LAYER_KINDS: dict[str, tuple[str, ...]] = {
    "attention": ("Attention", "MultiheadAttention"),
    "mlp": ("SwiGLU", "FeedForward"),
    "norm": ("RMSNorm", "LayerNorm"),
    "embedding": ("Embedding", "EmbeddingBag"),
}
_KIND_OF = {t: kind for kind, types in LAYER_KINDS.items() for t in types}


def layer_kind(type_name: str) -> str | None:
    """The kind of a module type (``attention``, ``mlp``, ``norm``, ``embedding``), None for any other."""
    return _KIND_OF.get(type_name)
