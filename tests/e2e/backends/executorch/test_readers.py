"""edgebench's ETDump and program readers (no ExecuTorch needed) against ExecuTorch's own (``flatc``-based, they
import the exporter) on the real files of ``tests/fixtures/executorch``: the same events, the same plans."""

from __future__ import annotations

import pytest

from edgebench.backends.executorch import etdump, program
from tests.conftest import require_executorch
from tests.paths import FIXTURES

HERE = FIXTURES / "executorch"


@pytest.mark.parametrize("name", ["lenet_xnnpack", "lenet_portable", "lenet_train"])
def test_etdump_reader_reads_what_executorchs_reads(name):
    require_executorch()
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    data = (HERE / f"{name}.etdp").read_bytes()
    theirs = deserialize_from_etdump_flatcc(data)
    ours = etdump.parse(data)
    assert [r.name for r in ours] == [r.name for r in theirs.run_data]
    for mine, run in zip(ours, theirs.run_data, strict=True):
        profiled = [e.profile_event for e in run.events if e.profile_event is not None]
        assert [(e.name, e.instruction_id, e.delegate_debug_id_str, e.start_time, e.end_time) for e in mine.events] == [
            (p.name or None, p.instruction_id, p.delegate_debug_id_str or None, p.start_time, p.end_time)
            for p in profiled
        ]


@pytest.mark.parametrize("name", ["tiny_xnnpack", "tiny_portable", "tiny_fp16", "tiny_train"])
def test_program_reader_reads_what_executorchs_reads(name):
    require_executorch()
    from executorch.exir._serialize._program import deserialize_pte_binary

    data = (HERE / f"{name}.pte").read_bytes()
    theirs = deserialize_pte_binary(data).program
    ours = program.parse(data)
    assert list(ours) == [p.name for p in theirs.execution_plan]
    for plan in theirs.execution_plan:
        method = ours[plan.name]
        assert list(method.planned_bytes) == list(plan.non_const_buffer_sizes)
        assert list(method.delegates) == [d.id for d in plan.delegates]
        kernels = [plan.operators[i.instr_args.op_index].name.rsplit("::", 1)[-1]
                   for i in plan.chains[0].instructions if type(i.instr_args).__name__ == "KernelCall"]  # fmt: skip
        assert [op for op in method.instructions if not op.endswith(" call")] == kernels
        tensors = [plan.values[i].val for i in plan.inputs]
        assert [t.dims if t else None for t in method.inputs] == [
            tuple(v.sizes) if type(v).__name__ == "Tensor" else None for v in tensors
        ]
