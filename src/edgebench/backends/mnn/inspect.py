"""``python -m edgebench.backends.mnn.inspect FILE``: an ``.mnn`` file's inputs and outputs as one JSON line.

Run in a child process by :func:`edgebench.backends.model_file.inspect`: MNN prints at import and as it opens a
model, and a file that is no model can crash it; the caller reads only the last stdout line.  MNN stores the
shapes its converter saw (an open batch reads as 1), which the run resizes; its Python API gives no readable
dtype, so every tensor is described as float32 (what the converter's image models take).
"""

from __future__ import annotations

import json
import sys


def describe(path: str) -> dict[str, list[dict[str, object]]]:
    from edgebench.backends.mnn.quiet import stdout_to_stderr
    from edgebench.backends.mnn.runtime import load

    with stdout_to_stderr():
        mnn, _ = load()
        interpreter = mnn.Interpreter(path)
        session = interpreter.createSession({"backend": "CPU", "numThread": 1})
        inputs = interpreter.getSessionInputAll(session)
        outputs = interpreter.getSessionOutputAll(session)

    def specs(tensors: dict[str, object]) -> list[dict[str, object]]:
        return [{"name": n, "dims": [int(d) for d in t.getShape()], "dtype": "float32"} for n, t in tensors.items()]  # type: ignore[attr-defined]

    return {"inputs": specs(inputs), "outputs": specs(outputs)}


if __name__ == "__main__":
    doc = describe(sys.argv[1])
    if not doc["inputs"] or not doc["outputs"]:
        raise SystemExit(1)
    print(json.dumps(doc))
