"""The little of the FlatBuffers format ExecuTorch's files need read: tables, their scalars, strings and vectors.

ExecuTorch's program (``.pte``, schema ``schema/program.fbs``) and its ETDump (``.etdp``,
``devtools/etdump/etdump_schema_flatcc.fbs``) are FlatBuffers.  edgebench reads a handful of fields of each (a
method's inputs and planned arenas, a run's profile events) by their slot in the schema, so that a workstation
without ExecuTorch (or without its ``flatc``-based readers, which import the exporter) can check a user's ``.pte``
and read the ETDump a device wrote.  Layout: a table starts with a signed offset back to its vtable; the vtable holds
its own length and one 16-bit offset per field slot (0: absent, the schema's default); offsets to tables, strings
and vectors are unsigned and relative to where they are stored; a vector or string starts with its length.
"""

from __future__ import annotations

import struct


class Table:
    """A FlatBuffer table at ``pos``: fields by their slot index in the schema."""

    def __init__(self, buf: bytes, pos: int) -> None:
        self.buf, self.pos = buf, pos
        self.vtable = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vtable_len = struct.unpack_from("<H", buf, self.vtable)[0]

    def _offset(self, index: int) -> int:
        slot = 4 + 2 * index
        return 0 if slot >= self.vtable_len else struct.unpack_from("<H", self.buf, self.vtable + slot)[0]

    def scalar(self, index: int, fmt: str, default: int) -> int:
        """A scalar field in ``struct`` format ``fmt`` (``i``, ``Q``, ``b``...), or its schema default."""
        offset = self._offset(index)
        return default if not offset else struct.unpack_from("<" + fmt, self.buf, self.pos + offset)[0]

    def _target(self, index: int) -> int | None:
        offset = self._offset(index)
        if not offset:
            return None
        at = self.pos + offset
        return at + struct.unpack_from("<I", self.buf, at)[0]

    def table(self, index: int) -> Table | None:
        at = self._target(index)
        return None if at is None else Table(self.buf, at)

    def string(self, index: int) -> str | None:
        at = self._target(index)
        if at is None:
            return None
        length = struct.unpack_from("<I", self.buf, at)[0]
        return self.buf[at + 4 : at + 4 + length].decode("utf-8", errors="replace")

    def tables(self, index: int) -> list[Table]:
        """A vector of tables."""
        at = self._target(index)
        if at is None:
            return []
        count = struct.unpack_from("<I", self.buf, at)[0]
        items = (at + 4 + 4 * i for i in range(count))
        return [Table(self.buf, item + struct.unpack_from("<I", self.buf, item)[0]) for item in items]

    def scalars(self, index: int, fmt: str) -> list[int]:
        """A vector of scalars in ``struct`` format ``fmt``."""
        at = self._target(index)
        if at is None:
            return []
        count = struct.unpack_from("<I", self.buf, at)[0]
        return list(struct.unpack_from(f"<{count}{fmt}", self.buf, at + 4))


def root(data: bytes, identifier: bytes, *, size_prefixed: bool = False) -> Table:
    """The root table of a buffer with this file ``identifier``; ``size_prefixed``: a uint32 length may come first
    (ETDump's); ``ValueError`` where the identifier is not there."""
    for start in (4, 0) if size_prefixed else (0,):
        if len(data) >= start + 8 and data[start + 4 : start + 8] == identifier:
            return Table(data, start + struct.unpack_from("<I", data, start)[0])
    raise ValueError(f"no {identifier.decode()} file identifier")
