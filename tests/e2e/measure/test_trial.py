"""build_result on the edges: a trial without samples, or whose worker could not reset its memory high-water mark.  The
end-to-end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/measure/test_trial.py.
"""

from tests.conftest import json_out


def test_worker_cpu_of_a_real_run_is_never_above_its_cores(cli):
    for _ in range(3):  # one-sample steps: the phases are short, where a wrong window shows most
        r = json_out(cli("run", "--steps", "1", "--warmup", "1", "--batch-size", "1", "--infer-steps", "1",
                         "--cores", "0x1", "--json", "--no-store"))  # fmt: skip
        for field in ("process_pct", "infer_process_pct"):  # withheld (None, with a note) on a window this short
            value = r["cpu"][field]
            assert value is None or 0 < value <= 100 * len(r["trial"]["cores"]), value
        assert r["cpu"]["process_pct"] is not None or any("withheld" in n for n in r["measurement_notes"])
