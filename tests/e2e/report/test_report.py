"""``trials``, ``show``, ``report`` and ``plot`` end to end: real trials (a small sweep and a traced trial) run by the
real CLI, a report opened in a real headless Chromium with networking off, and every plot kind in every format."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edgebench.report.columns import SUMMARY_COLUMNS, summary_values
from edgebench.store import Store
from tests.browser import Browser
from tests.conftest import pythonpath_first
from tests.paths import FIXTURES, GOLDEN_STORE, GOLDEN_TRACED, TESTS

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF", ".svg": b"<?xml"}


@pytest.fixture(scope="module")
def world(cli_factory):
    """One store holding a two-trial sweep and a traced trial (whose printed summary is kept), and a monitor folder."""
    cli = cli_factory("report")
    root = cli.store_path.parent
    proc = cli("sweep", "--set", "models=[lenet]", "--set", "batch_sizes=[2, 4]", "--set", "steps=3",
               "--set", "warmup=0", "--set", "infer_steps=0")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # Batch 256: three steps must span ten 10 ms sampling intervals for the utilization-over-three-steps view even
    # on a quiet machine (LeNet at batch 8 takes ~5 ms a step; the view then rightly says it cannot tell)
    proc = cli("run", "--model", "lenet", "--batch-size", "256", "--steps", "3", "--warmup", "1", "--infer-steps", "0",
               "--trace", "layers", "--counters", "task-clock,context-switches")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run_out, _, stored_line = proc.stdout.rstrip("\n").rpartition("\n")
    traced = stored_line.split()[3]
    # The Jetson TX2 fixture tree gives the trial power rails, clocks and temperatures (still values: a copied tree)
    proc = cli("run", "--model", "lenet", "--batch-size", "4", "--steps", "3", "--warmup", "0", "--infer-steps", "0",
               "--sysfs-root", str(FIXTURES / "sysfs" / "jetson_tx2"), "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    sensed = json.loads(proc.stdout)["trial_id"]
    monitor = root / "monitor"
    proc = cli("monitor", "--sysfs-root", str(FIXTURES / "sysfs" / "rpi4"), "--duration", "1s", "--out", str(monitor))
    assert proc.returncode == 0, proc.stderr
    with Store(cli.store) as store:
        (sweep_id,) = store.sweep_ids()
        results = store.trials()
    return {"cli": cli, "root": root, "traced": traced, "sensed": sensed, "run_out": run_out, "sweep": sweep_id,
            "results": results, "monitor": monitor}  # fmt: skip


def test_trials_lists_and_filters(world):
    cli = world["cli"]
    listed = json.loads(cli("trials", "--json").stdout)
    assert [r["trial_id"] for r in listed] == [r.trial_id for r in world["results"]]
    in_sweep = json.loads(cli("trials", "--json", "--sweep", world["sweep"]).stdout)
    assert sorted(r["trial"]["batch_size"] for r in in_sweep) == [2, 4]
    assert [r["trial_id"] for r in json.loads(cli("trials", "--json", "--last", "1").stdout)] == [world["sensed"]]
    assert json.loads(cli("trials", "--json", "--model", "alexnet").stdout) == []
    text = cli("trials", "--target", "local", "--status", "ok").stdout
    assert all(r.trial_id in text for r in world["results"]) and "lenet" in text
    bad = cli("trials", "--status", "fine")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--status" in bad.stderr
    assert cli("trials", "--sweep", "nope").returncode == 2


def test_show_prints_what_run_printed(world):
    proc = world["cli"]("show", world["traced"][:17])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip("\n") == world["run_out"]
    missing = world["cli"]("show", "20990101")
    assert missing.returncode == 2 and "no trial matches" in missing.stderr


@pytest.fixture(scope="module")
def report_page(world):
    out = world["root"] / "report.html"
    proc = world["cli"]("report", world["traced"], world["sensed"], "--sweep", world["sweep"],
                        "--monitor", str(world["monitor"]), "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    browser = Browser()
    try:
        browser.open(out.as_uri())
        rendered = browser.evaluate(
            "new Promise((ok, no) => { const t0 = Date.now(); (function poll() {"
            " if (document.body.dataset.rendered) ok(Number(document.body.dataset.rendered));"
            " else if (Date.now() - t0 > 150000) no('charts not drawn in 150 s'); else setTimeout(poll, 50); })(); })",
            timeout=180,
        )
        page = browser.evaluate("""(() => {
            const charts = [...document.querySelectorAll('.chart')].map(div => ({
                key: div.dataset.key,
                svg: div.querySelectorAll('svg.main-svg').length,
                shapes: div.querySelectorAll('.shapelayer path').length,
                marks: [...div.querySelectorAll('.scatterlayer .trace path, .barlayer .trace path')]
                    .filter(p => (p.getAttribute('d') || '').length > 2).length,
                legend: [...div.querySelectorAll('.legendtext')].map(t => t.textContent),
                title: (div.querySelector('.gtitle') || {}).textContent || ''}));
            const rows = [...document.querySelectorAll('#summary tbody tr')].map(tr => {
                const cells = {};
                tr.querySelectorAll('td').forEach(td => { cells[td.dataset.field] = td.dataset.value; });
                return cells; });
            const missing = [...document.querySelectorAll('p.missing')].map(p => p.dataset.key);
            return {charts, rows, missing, text: document.body.innerText};
        })()""")
        shot = world["root"] / "report.png"
        browser.screenshot(shot)
        pdf = browser.print_pdf()
        errors, urls = browser.console_errors(), browser.requested_urls()
    finally:
        browser.close()
    artifacts = TESTS / "artifacts"
    artifacts.mkdir(exist_ok=True)
    shutil.copy(shot, artifacts / "report.png")
    print(f"report screenshot: {artifacts / 'report.png'} (and {shot})")
    return {"rendered": rendered, "page": page, "pdf": pdf, "errors": errors, "urls": urls, "html": out}


def test_report_opens_offline_with_no_console_error(report_page):
    assert report_page["errors"] == []
    assert report_page["urls"] == [report_page["html"].as_uri()]  # nothing else was fetched: self-contained
    html = report_page["html"].read_text()
    assert "<script src" not in html and "<link" not in html and "http://" not in html.split("<script>")[0]


def test_every_chart_is_drawn_and_not_empty(report_page, world):
    charts = report_page["page"]["charts"]
    assert report_page["rendered"] == len(charts) > 0
    empty = [c["key"] for c in charts if c["svg"] == 0 or c["marks"] == 0 or not c["title"]]
    assert empty == []
    keys = {c["key"] for c in charts}
    traced = world["traced"]
    assert {f"steps-{traced}", f"util-{traced}", f"mem-{traced}", f"layers-{traced}"} <= keys
    assert {"util3-" + traced, "paper-throughput_sps", "paper-peak_memory_bytes", "mnn-freq-temp"} <= keys
    assert f"{world['sweep']}-sweep-step_time_ms-batch_size" in keys
    shapes = {c["key"]: c["shapes"] for c in charts}
    sensed = world["sensed"]
    assert shapes[f"power-{sensed}"] >= 3  # the idle baseline, the energy window and the idle window
    assert f"clocks-{sensed}" in keys and shapes[f"util-{traced}"] >= 4  # step boundaries


def test_memory_by_category_and_layer_counters_are_drawn(report_page, world):
    keys = {c["key"] for c in report_page["page"]["charts"]}
    # The paper's Figure 9 from every trial here (all torch: each measured its categories), and --counters' view.
    assert {"paper-memory-categories-bars", f"layer-counters-{world['traced']}"} <= keys
    text = report_page["page"]["text"]
    assert "memory by category (MiB)" in text and "saved activations" in text and "optimizer state" in text


def test_the_jetson_trial_shows_gpu_utilization_and_every_rail(report_page, world):
    charts = {c["key"]: c for c in report_page["page"]["charts"]}
    sensed, traced = world["sensed"], world["traced"]
    assert charts[f"gpu-{sensed}"]["marks"] >= 1  # the TX2's gpu.0/load
    assert charts[f"rails-{sensed}"]["marks"] >= 3  # its INA3221 rails, each a line
    assert (
        "GPU utilization" in charts[f"gpu-{sensed}"]["title"]
        and "Power by component" in charts[f"rails-{sensed}"]["title"]
    )
    rails = next(r for r in world["results"] if r.trial_id == sensed).energy.by_rail
    assert len(rails) >= 3 and all(any(rail in name for name in charts[f"rails-{sensed}"]["legend"]) for rail in rails)
    missing = set(report_page["page"]["missing"])
    assert {f"gpu-{traced}", f"rails-{traced}"} <= missing  # this VM has neither: a sentence, not an empty chart
    # Against batch size (the paper's Figures 4-6): the TX2 trial's GPU and per-rail energy, this VM's cores
    for key in ("paper-gpu_util_pct", "paper-rail_energy_per_step_j", "paper-cpu_util_pct", "paper-core_util_pct"):
        assert charts[key]["marks"] >= 1, key
    assert all(any(rail in name for name in charts["paper-rail_energy_per_step_j"]["legend"]) for rail in rails)


def test_gpu_rail_and_category_plots_and_utilization_sweep_axes(world):
    cli, root, sensed = world["cli"], world["root"], world["sensed"]
    for kind, args in (("gpu-utilization", [sensed]), ("power-rails", [sensed]), ("memory-categories", [])):
        out = root / f"{kind}.svg"
        proc = cli("plot", kind, *args, "-o", str(out))
        assert proc.returncode == 0, (kind, proc.stderr)
        _check_file(out, ".svg", kind)
    # GPU utilization from the TX2 trial; CPU utilization from the sweep on this machine (the copied tree's CPU
    # counters stand still).
    swept = ["--sweep", world["sweep"]]
    for y, chosen in (("gpu_util_pct", [sensed]), ("cpu_util_pct", swept), ("core_util_pct", swept),
                      ("rail_energy_per_step_j", [sensed])):  # fmt: skip
        out = root / f"sweep-{y}.png"
        proc = cli("plot", "sweep", *chosen, "--y", y, "-o", str(out))
        assert proc.returncode == 0, (y, proc.stderr)
    proc = cli("plot", "layer-counters", world["traced"], "-o", str(root / "counters.png"))
    assert proc.returncode == 0, proc.stderr


def test_what_was_not_measured_is_a_sentence(report_page, world):
    missing = set(report_page["page"]["missing"])
    traced = world["traced"]
    sensed, drawn = world["sensed"], {c["key"] for c in report_page["page"]["charts"]}
    assert f"power-{traced}" in missing and f"{world['sweep']}-sweep-energy_per_sample_j-batch_size" in missing
    assert all(f"power-{r.trial_id}" not in drawn for r in world["results"] if r.trial_id != sensed)
    assert "no power sensor" in report_page["page"]["text"]
    assert {f"util-{sensed}", f"layers-{sensed}"} <= missing  # a copied tree's CPU counters stand still; not traced
    assert "the counters did not advance" in report_page["page"]["text"]


def test_summary_table_equals_the_store(report_page, world):
    rows = {r["trial_id"]: r for r in report_page["page"]["rows"]}
    assert set(rows) == {r.trial_id for r in world["results"]}
    for result in world["results"]:
        stored = summary_values(result)
        for column in SUMMARY_COLUMNS:
            shown, value = rows[result.trial_id][column.field], stored[column.field]
            if value is None:
                assert shown == ""
            elif column.digits is None:
                assert shown == str(value)
            else:
                assert float(shown) == pytest.approx(value, rel=1e-12), column.field


def test_report_prints_to_pdf(report_page):
    assert report_page["pdf"].startswith(b"%PDF") and len(report_page["pdf"]) > 20_000


def _check_file(out: Path, suffix: str, what: str) -> None:
    data = out.read_bytes()
    assert data.startswith(MAGIC[suffix]) and len(data) > 5_000, what
    if suffix == ".svg":
        assert data.count(b"<path") > 10, what


def test_each_plot_kind_from_the_command_line(world):
    """Every kind once through the real CLI (formats taken in turn); the full matrix is drawn in-process below."""
    cli, traced, root = world["cli"], world["traced"], world["root"]
    cases = [(kind, traced) for kind in ("step-times", "utilization", "memory", "layers")]
    cases += [("sweep", None), ("freq-temp", None)]
    for i, (kind, trial) in enumerate(cases):
        suffix = (".png", ".pdf", ".svg")[i % 3]
        out = root / f"{kind}{suffix}"
        args = ["plot", kind, *([trial] if trial else []), "-o", str(out)]
        if kind == "sweep":
            args += ["--sweep", world["sweep"], "--y", "throughput_sps", "--x", "batch_size"]
        if kind == "utilization":
            args += ["--steps", "3"]
        if kind == "freq-temp":
            args += ["--monitor", str(world["monitor"])]
        proc = cli(*args)
        assert proc.returncode == 0, (kind, proc.stderr)
        assert proc.stdout.strip() == f"wrote {out}"
        _check_file(out, suffix, kind)


def _views(store_path: Path, traced: str, sweep_id: str, monitor: Path | None):
    from edgebench.report import figures as f
    from edgebench.report.content import load_stored, read_monitor

    with Store(store_path, read_only=True) as store:
        stored = load_stored(store, store.get(traced))
        results = store.query(sweep_id=sweep_id)
    views = [
        f.step_times(stored),
        f.utilization(stored),
        f.utilization(stored, 3),
        f.memory(stored),
        f.layers(stored),
        f.sweep_curve(results, "step_time_ms"),
        f.sweep_curve(results, "peak_memory_bytes"),
    ]
    if monitor is not None:
        views.append(f.monitor_freq_temp(read_monitor(monitor), "monitor"))
    return views


@pytest.mark.parametrize("suffix", [".png", ".pdf", ".svg"])
def test_every_figure_in_every_format(world, tmp_path, suffix):
    from edgebench.report.figures import Figure
    from edgebench.report.plot import save_figure

    views = _views(world["cli"].store, world["traced"], world["sweep"], world["monitor"])
    assert all(isinstance(v, Figure) for v in views), [v for v in views if not isinstance(v, Figure)]
    for view in views:
        out = tmp_path / f"{view.key}{suffix}"
        save_figure(view, out, suffix[1:])
        _check_file(out, suffix, view.key)


def test_plot_of_a_missing_sensor_is_a_sentence_not_a_chart(world):
    out = world["root"] / "power.png"
    proc = world["cli"]("plot", "power", world["traced"], "-o", str(out))
    assert proc.returncode == 2 and "no power sensor" in proc.stderr and proc.stderr.count("\n") == 1
    assert not out.exists()
    proc = world["cli"]("plot", "sweep", "--sweep", world["sweep"], "--y", "energy_per_sample_j", "-o", str(out))
    assert proc.returncode == 2 and "no power sensor" in proc.stderr and not out.exists()


def test_plots_and_report_from_an_old_store(cli, tmp_path):
    """The golden schema-3 store: records without ``target``, ``mode`` and later fields still draw, in every format."""
    from edgebench.report.figures import Figure
    from edgebench.report.plot import save_figure

    old = tmp_path / "old.sqlite"
    shutil.copy(GOLDEN_STORE, old)
    traced = GOLDEN_TRACED
    views = _views(old, traced, "golden", None)
    assert all(isinstance(v, Figure) for v in views)
    for i, view in enumerate(views):
        suffix = (".png", ".pdf", ".svg")[i % 3]
        save_figure(view, tmp_path / f"{view.key}{suffix}", suffix[1:])
        _check_file(tmp_path / f"{view.key}{suffix}", suffix, view.key)
    proc = cli("plot", "layers", traced, "-o", str(tmp_path / "layers.pdf"), store=old)
    assert proc.returncode == 0, proc.stderr
    proc = cli("report", "--sweep", "golden", traced, "-o", str(tmp_path / "old.html"), store=old)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "old.html").read_text()
    with Store(old, read_only=True) as store:
        expected = {r.trial_id for r in store.query(sweep_id="golden")} | {traced}
    assert {i for i in expected if f'data-trial="{i}"' in page} == expected


def test_without_the_extra_report_and_plot_say_what_to_install(world, tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('plotly', 'matplotlib'):\n            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    for args in (["report", "-o", str(tmp_path / "r.html")], ["plot", "sweep", "-o", str(tmp_path / "s.png")]):
        proc = world["cli"](*args, env=pythonpath_first(blocker))
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "pip install 'edgebench[report]'" in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_the_core_never_imports_the_plotting_libraries():
    code = (
        "import sys, edgebench.cli, edgebench.records.trial, edgebench.launch.trial, edgebench.report.figures, "
        "edgebench.report.content\nprint(sorted(m for m in ('plotly', 'matplotlib') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_energy_per_step_by_rail_against_batch_size(world):
    from edgebench.report.figures import Figure, Missing, sweep_curve

    sensed = next(r for r in world["results"] if r.trial_id == world["sensed"])
    view = sweep_curve([sensed], "rail_energy_per_step_j")
    assert isinstance(view, Figure) and len(view.traces) == len(sensed.energy.by_rail) >= 3
    assert {t.name.split()[-1] for t in view.traces} == set(sensed.energy.by_rail)
    steps = sensed.latency.step_ms.n
    rail, energy = next(iter(sensed.energy.by_rail.items()))
    assert next(t for t in view.traces if t.name.endswith(rail)).y == [energy.energy_j / steps]
    others = [r for r in world["results"] if r.trial_id != world["sensed"]]
    assert isinstance(sweep_curve(others, "rail_energy_per_step_j"), Missing)


def test_each_cores_utilization_against_batch_size(world):
    """The paper's Figure 5: one curve per core, its points each trial's per-core utilization."""
    from edgebench.report.figures import Figure, Missing, sweep_curve

    swept = [r for r in world["results"] if r.trial_id not in (world["sensed"], world["traced"])]
    view = sweep_curve(swept, "core_util_pct")
    cores = [c for c, pct in enumerate(swept[0].cpu.util_pct.per_core) if pct is not None]
    assert isinstance(view, Figure) and sorted(t.name.split()[-1] for t in view.traces) == [f"cpu{c}" for c in cores]
    by_batch = sorted(swept, key=lambda r: r.trial.batch_size)
    trace = next(t for t in view.traces if t.name.endswith(f"cpu{cores[-1]}"))
    assert trace.x == [r.trial.batch_size for r in by_batch]
    assert trace.y == [r.cpu.util_pct.per_core[cores[-1]] for r in by_batch]
    no_util = [r.model_copy(update={"cpu": r.cpu.model_copy(update={"util_pct": None})}) for r in swept]
    assert isinstance(sweep_curve(no_util, "core_util_pct"), Missing)


def test_the_jetson_trace_has_gpu_utilization_and_rail_tracks(world):
    out = world["root"] / "jetson.trace.json"
    proc = world["cli"]("trace", world["sensed"], "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    tracks = {e["name"] for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "C"}
    assert "gpu0 utilization" in tracks
    assert len([t for t in tracks if t.startswith("power ")]) >= 3
