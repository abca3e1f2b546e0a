"""Text that ships inside the package: Shakespeare's Macbeth (public domain), and the user's own text files.

For the character-level models (:meth:`ShippedText.load`) characters are the tokens (the alphabet is every character
of the text, sorted); for the language models (:func:`byte_text`) bytes are, through a byte tokenizer that any file
fits.  The last 10% of a text is held out for evaluation.  Macbeth's speeches, labelled by speaker, are the
encoder's classification task (:data:`SPEAKERS`).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
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

    def read_bytes(self) -> bytes:
        return resources.files("edgebench.data").joinpath("texts", self.filename).read_bytes()

    def load(self) -> TextData:
        import torch  # only to load: declaring the dataset (trial validation) needs no torch

        text = self.read()
        alphabet = "".join(sorted(set(text)))
        index = {c: i for i, c in enumerate(alphabet)}
        ids = torch.tensor([index[c] for c in text], dtype=torch.long)
        split = int(len(ids) * (1 - HELD_OUT_SHARE))
        return TextData(ids[:split], ids[split:], alphabet)


SHAKESPEARE = ShippedText("shakespeare", "macbeth.txt", "Shakespeare's Macbeth, 103K characters, last 10% held out")


# -- bytes, for the language models --------------------------------------------------------------------------------

#: The byte tokenizer: a token per byte (0-255), then three specials.  Nothing to train, ship or version, lossless for
#: any file, and the same ids for every text (a character alphabet is per file), so a model moves between texts.
BOS, EOS, PAD = 256, 257, 258
BYTE_VOCAB = PAD + 1


def encode_bytes(text: str) -> list[int]:
    """The token ids of ``text``: its UTF-8 bytes."""
    return list(text.encode("utf-8"))


def decode_bytes(ids: list[int]) -> str:
    """Text back from token ids (specials dropped, a broken UTF-8 sequence replaced)."""
    return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


def unigram_bits_per_byte(train: bytes, held_out: bytes) -> float:
    """The reference line a language model must get below to have learned more than byte frequencies: the
    cross-entropy of ``held_out`` under the byte frequencies of ``train`` (add-one smoothed), in bits per byte."""
    counts = Counter(train)
    total = len(train) + 256
    return -sum(n * math.log2((counts[b] + 1) / total) for b, n in Counter(held_out).items()) / max(len(held_out), 1)


#: A model that knows nothing: every one of the 259 tokens equally likely.
UNIFORM_BITS_PER_BYTE = math.log2(BYTE_VOCAB)


@dataclass(frozen=True)
class TextFile:
    """A text the user names (``--data notes.txt``): any file, read as bytes."""

    path: str

    @property
    def name(self) -> str:
        return Path(self.path).name

    def read_bytes(self) -> bytes:
        return Path(self.path).read_bytes()


@dataclass(frozen=True)
class ByteText:
    """A text as byte tokens, split for a language model: the last 10% held out; with ``pretraining``, the training
    part halved, the first half for the base's pretraining and the second for the fine-tune, so the fine-tune
    learns from text the base never saw."""

    name: str
    nbytes: int
    #: 16 hex digits of the text's SHA-256 (a pretrained base is cached by it).
    sha256: str
    train: torch.Tensor
    test: torch.Tensor
    pretrain: torch.Tensor | None
    #: :func:`unigram_bits_per_byte` of the held-out part against the whole training part.
    unigram_bits_per_byte: float


def text_source(data: str) -> ShippedText | TextFile:
    """The shipped text called ``data``, else the file at that path."""
    from edgebench.registry import DATASETS

    if data in DATASETS:
        source = DATASETS.load(data)
        if isinstance(source, ShippedText):
            return source
    return TextFile(data)


def byte_text(data: str, *, pretraining: bool = False) -> ByteText:
    """``data`` (a shipped text's name or a file's path) as byte tokens, split (see :class:`ByteText`)."""
    import torch

    source = text_source(data)
    raw = source.read_bytes()
    split = int(len(raw) * (1 - HELD_OUT_SHARE))
    ids = torch.frombuffer(bytearray(raw), dtype=torch.uint8).long()
    train, test = ids[:split], ids[split:]
    pretrain = None
    if pretraining:
        pretrain, train = train[: split // 2], train[split // 2 :]
    return ByteText(
        name=source.name,
        nbytes=len(raw),
        sha256=hashlib.sha256(raw).hexdigest()[:16],
        train=train,
        test=test,
        pretrain=pretrain,
        unigram_bits_per_byte=unigram_bits_per_byte(raw[:split], raw[split:]),
    )


def min_text_bytes(window: int, pretraining: bool = False) -> int:
    """The shortest text whose held-out part (and training parts) each hold one ``window``-token window and its
    next token."""
    need = window + 2
    return math.ceil(need / HELD_OUT_SHARE) * (2 if pretraining else 1)


# -- labelled speeches, for the encoder ------------------------------------------------------------------------------

_SPEECH = re.compile(r"\n([A-Z][A-Z ]+)\.\n(.+?)(?=\n\n)", flags=re.S)
TEST_SHARE = 0.2


@dataclass(frozen=True)
class SpeechData:
    """Speeches as ``[CLS]`` + their first bytes, padded, with the speaker's class; ``speakers`` names the classes."""

    train_tokens: torch.Tensor
    train_labels: torch.Tensor
    test_tokens: torch.Tensor
    test_labels: torch.Tensor
    speakers: tuple[str, ...]

    @property
    def num_classes(self) -> int:
        return len(self.speakers)

    @property
    def majority_accuracy(self) -> float:
        """The held-out accuracy of always answering the most frequent speaker: the line a classifier must beat."""
        counts = Counter(self.test_labels.tolist())
        return counts.most_common(1)[0][1] / len(self.test_labels)


@dataclass(frozen=True)
class ShippedSpeeches:
    """Which of a play's most frequent speakers says a speech (the speaker's name line removed)."""

    name: str
    filename: str
    description: str
    speakers: int = 4
    kind: str = "speeches"
    requires: str = ""

    def load(self, length: int = 128, seed: int = 0) -> SpeechData:
        import torch

        text = ShippedText(self.name, self.filename, "").read()
        speeches = _SPEECH.findall(text)
        top = [s for s, _ in Counter(s for s, _ in speeches).most_common(self.speakers)]
        rows = [([BOS, *body.encode("utf-8")[: length - 1]], top.index(s)) for s, body in speeches if s in top]
        tokens = torch.full((len(rows), length), PAD, dtype=torch.long)
        for i, (ids, _) in enumerate(rows):
            tokens[i, : len(ids)] = torch.tensor(ids)
        labels = torch.tensor([label for _, label in rows])
        order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(seed))
        n_test = int(len(rows) * TEST_SHARE)
        test, train = order[:n_test], order[n_test:]
        return SpeechData(tokens[train], labels[train], tokens[test], labels[test], tuple(top))


SPEAKERS = ShippedSpeeches(
    "speakers", "macbeth.txt", "Macbeth's speeches by its 4 most frequent speakers (304), 20% held out"
)
