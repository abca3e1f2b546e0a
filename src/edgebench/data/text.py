"""Text that ships inside the package, for the character-level models: Shakespeare's Macbeth (public domain).

Characters are the tokens (the alphabet is every character of the text, sorted).  The last 10% of the text is
held out for evaluation: accuracy is how often the model's most likely next character is the right one there.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


HELD_OUT_SHARE = 0.1


@dataclass(frozen=True)
class TextData:
    train: torch.Tensor
    test: torch.Tensor
    alphabet: str

    @property
    def num_classes(self) -> int:
        return len(self.alphabet)


@dataclass(frozen=True)
class ShippedText:
    name: str
    filename: str
    description: str
    kind: str = "text"
    requires: str = ""

    def read(self) -> str:
        return resources.files("edgebench.data").joinpath("texts", self.filename).read_text(encoding="utf-8")

    def load(self) -> TextData:
        import torch  # only to load: declaring the dataset (trial validation) needs no torch

        text = self.read()
        alphabet = "".join(sorted(set(text)))
        index = {c: i for i, c in enumerate(alphabet)}
        ids = torch.tensor([index[c] for c in text], dtype=torch.long)
        split = int(len(ids) * (1 - HELD_OUT_SHARE))
        return TextData(ids[:split], ids[split:], alphabet)


SHAKESPEARE = ShippedText("shakespeare", "macbeth.txt", "Shakespeare's Macbeth, 103K characters, last 10% held out")
