from __future__ import annotations

import functools
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.cli_server import Server
from tests.paths import FIXTURES, SRC, TESTS

# The property-based tests (the parsers fed hostile input, issue 39): no example database (nothing written into the
# checkout), no deadline (a loaded 2-core machine makes one example take seconds now and then, which is not a bug),
# a small number of examples each test may raise where it needs more, and the same examples every run (a suite that
# fails one run in ten is no help).  `pytest --hypothesis-profile explore tests/unit` draws new ones, ten times as
# many: run it after changing a parser, and keep what it finds as an example or a fix.
settings.register_profile(
    "edgebench", database=None, deadline=None, max_examples=50, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
settings.register_profile("explore", parent=settings.get_profile("edgebench"), derandomize=False, max_examples=500)
settings.load_profile("edgebench")


def pytest_configure(config: pytest.Config) -> None:
    """What Hypothesis keeps (the constants it gathers from the code under test) goes to pytest's cache folder
    beside the suite's derived files, not to ``.hypothesis/`` in the checkout."""
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(config.cache.mkdir("hypothesis"))
    if not hasattr(config, "workerinput"):  # the controller, before it starts the xdist workers
        compile_checkout()


def compile_checkout() -> None:
    """Compile ``src/`` and ``tests/`` once, into their ``__pycache__`` folders (git ignores them), before the
    workers start.

    Why: where ``PYTHONDONTWRITEBYTECODE`` is set (this machine's image sets it), a fresh clone has no bytecode and no
    process writes any, so each of the suite's thousand processes compiled every edgebench module it imported (0.2 s
    of a command's or a worker's start here).  Compiling takes a second, and a changed source is compiled again.
    (Not ``PYTHONPYCACHEPREFIX``: every process would then look for all its bytecode there, the installed packages'
    too, and compile torch at each import.)"""
    import compileall

    for folder in (SRC, TESTS):
        compileall.compile_dir(folder, quiet=1)


# OpenMP threads that wait for work sleep instead of spinning, in this process and every one the suite starts (the
# torch workers take the variable from the environment they inherit).  The suite runs two xdist workers on two
# cores, each starting trials whose torch uses every core: spinning threads then burn the CPU the others need.
# Three concurrent LeNet-sized trials took 36 s and 70 CPU-s spinning, 18 s and 34 CPU-s sleeping, here.  It changes
# how fast torch wakes its threads, which no test times; set it to ACTIVE to run the suite as torch's default.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Ctrl-C as a terminal sends it, for the processes the tests start and interrupt.  A shell without job control
# starts a background command (``pytest ... &`` in a script) with SIGINT ignored, every child inherits that, and
# the command then rightly ignores the SIGINT the signal tests send it; a handler here is reset to the default in
# the children.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def private_temp_folder(tmp_path_factory):
    """Every process the suite starts makes its temporary files here, and the suite must leave none behind.

    A folder of its own, because other runs may share ``/tmp``: what is left here is this suite's doing (a launcher
    killed by a test and never cleaned up after, a trial folder not removed).
    """
    folder = tmp_path_factory.mktemp("tmp")
    previous = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read TMPDIR again
    yield folder
    if previous is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = previous
    tempfile.tempdir = None
    left = sorted(p.name for p in folder.glob("edgebench-*"))
    assert not left, f"the test suite left temporary folders behind: {left}"


@pytest.fixture(autouse=True)
def no_models_named(monkeypatch):
    """Each test starts with no ``module:attr`` model named (``$EDGEBENCH_NAMED_MODELS``, which naming one sets for
    the command's own processes): one that a test named is not importable in the next test of the worker."""
    monkeypatch.delenv("EDGEBENCH_NAMED_MODELS", raising=False)


@pytest.fixture
def sysfs_tree():
    """Path of a fixture device tree by name (``rpi4``...)."""
    return lambda name: FIXTURES / "sysfs" / name


def derived_folder(config: pytest.Config) -> Path:
    """Where the suite keeps what it derives from the built-in models (parameter and FLOP counts, ONNX exports, layer
    graphs): pytest's cache folder (``.pytest_cache``, emptied by ``pytest --cache-clear``), so the xdist workers,
    every process the tests start and the next run (the docs-examples stage after the first) make each once.

    Sharing cannot serve a stale file: each is keyed by everything that decides it, the model code's fingerprint
    among them, and written by replacing it whole.  The tests of the count and graph caches give their own folders."""
    return Path(config.cache.mkdir("edgebench-derived"))


@pytest.fixture(scope="session")
def model_counts_cache(pytestconfig) -> Path:
    """The models' parameter and FLOP counts (``$EDGEBENCH_CACHE``): counting every model takes ~30 s."""
    return derived_folder(pytestconfig) / "model-counts.json"


@functools.cache
def cli_server() -> Server:
    """This pytest process's fork server of the command (tests/cli_server.py), started at its first use."""
    return Server()


class Edgebench:
    """The real ``edgebench`` entry point in a process of its own, with a store, a model-count cache and a terminal
    width of its own: the one harness every end-to-end test runs the command through (the ``cli`` and ``cli_factory``
    fixtures).  A call runs as ``python -m edgebench`` forked from the suite's command server (tests/cli_server.py:
    the same process but for the interpreter's start), or as a real subprocess where that start would differ;
    :meth:`start` always starts a real one.

    ``env`` adds variables to a call (a value of None removes one); ``store=`` points one call at another store.
    """

    def __init__(self, store_path: Path, cache_path: Path, columns: int = 120, cwd: Path | None = None) -> None:
        self.store_path = store_path
        self.cache_path = cache_path
        self.columns = columns
        self.cwd = cwd

    @property
    def store(self) -> Path:
        return self.store_path

    def environment(self, env: dict[str, str | None] | None = None, store: Path | None = None) -> dict[str, str]:
        merged: dict[str, str | None] = dict(
            os.environ,
            EDGEBENCH_STORE=str(store or self.store_path),
            EDGEBENCH_CACHE=str(self.cache_path),
            COLUMNS=str(self.columns),
        )
        merged.update(env or {})
        return {k: v for k, v in merged.items() if v is not None}

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "edgebench", *args]

    def __call__(
        self,
        *args: str,
        timeout: float = 300,
        cwd: Path | None = None,
        env: dict[str, str | None] | None = None,
        store: Path | None = None,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        environment = self.environment(env, store)
        if cli_server().forkable(environment):
            folder = str(cwd or self.cwd or os.getcwd())
            return cli_server().run(list(args), environment, folder, input, timeout)
        return subprocess.run(
            self.command(*args),
            capture_output=True,
            text=True,
            env=environment,
            timeout=timeout,
            cwd=cwd or self.cwd,
            input=input,
        )

    def json(self, *args: str, **kwargs: Any) -> Any:
        """Run, require exit 0, and read stdout as JSON."""
        proc = self(*args, **kwargs)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def start(
        self,
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str | None] | None = None,
        store: Path | None = None,
        **popen: Any,
    ) -> subprocess.Popen[str]:
        """Start the command and return at once (a sweep to interrupt, a monitor to stop): output on pipes."""
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(
            self.command(*args), text=True, env=self.environment(env, store), cwd=cwd or self.cwd, **popen
        )


@pytest.fixture
def cli(tmp_path, model_counts_cache) -> Edgebench:
    """The real ``edgebench`` command with a store in ``tmp_path`` (``cli.store_path``) and the suite's model-count
    cache (``cli.cache_path``; a test of the cache sets its own)."""
    return Edgebench(tmp_path / "store.sqlite", model_counts_cache)


@pytest.fixture(scope="session")
def cli_factory(tmp_path_factory, model_counts_cache):
    """``cli_factory(name)``: an :class:`Edgebench` with a store in a new folder, for a module's or the session's
    shared trials (a module-scoped fixture cannot use the function-scoped ``cli``)."""

    def make(name: str, columns: int = 120) -> Edgebench:
        folder = tmp_path_factory.mktemp(name)
        return Edgebench(folder / "store.sqlite", model_counts_cache, columns=columns, cwd=folder)

    return make


#: The counters of the shared traced trial: software events, which every Linux kernel counts (a VM has no PMU).
TRACED_COUNTERS = "page-faults,context-switches,task-clock"


@pytest.fixture(scope="session")
def traced_lenet(cli_factory) -> tuple[Path, dict[str, Any]]:
    """One layer-traced LeNet trial with perf counters, run once for the whole session by the real command: the
    store holding it (a template: copy it before adding to it, see :func:`store_with_traced_lenet`) and its record
    as ``run --json`` printed it.  ``layers``, ``trace``, ``peak`` and the counters' tests all read this one trial
    rather than each tracing their own."""
    cli = cli_factory("traced-lenet")
    record = cli.json("run", "-m", "lenet", "-b", "8", "--steps", "3", "--warmup", "1", "--infer-steps", "0",
                      "--trace", "layers", "--counters", TRACED_COUNTERS, "--json")  # fmt: skip
    return cli.store_path, record


def store_with_traced_lenet(traced_lenet: tuple[Path, dict[str, Any]], store: Path) -> dict[str, Any]:
    """Copy the shared traced trial's store to ``store`` (which must not exist yet) and return the trial's record."""
    template, record = traced_lenet
    assert not store.exists(), store
    shutil.copy(template, store)
    return record


def pythonpath_first(folder: Path) -> dict[str, str]:
    """The ``env`` that puts ``folder`` first on the command's ``PYTHONPATH`` (a user's model module, or a
    ``sitecustomize.py`` that blocks an import to show what a missing extra looks like)."""
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


def json_out(proc: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(proc.stdout)


@pytest.fixture(scope="session", autouse=True)
def derived_files_cache(pytestconfig) -> Iterator[Path]:
    """``$EDGEBENCH_CACHE_DIR`` (ONNX exports, layer graphs) for this process and every one the tests start: the
    :func:`derived_folder`, never the user's ``~/.cache``."""
    folder = derived_folder(pytestconfig) / "files"
    folder.mkdir(exist_ok=True)
    previous = os.environ.get("EDGEBENCH_CACHE_DIR")
    os.environ["EDGEBENCH_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("EDGEBENCH_CACHE_DIR", None)
    else:
        os.environ["EDGEBENCH_CACHE_DIR"] = previous


@pytest.fixture(scope="session")
def onnx_cache(derived_files_cache: Path) -> Path:
    """The folder of exported ONNX models (in :func:`derived_folder`)."""
    return derived_files_cache / "onnx"


def require_mnn() -> None:
    """Fail (never skip) where the MNN extra is missing, naming the install line."""
    from edgebench.backends.mnn import missing_package

    reason = missing_package()
    if reason:
        pytest.fail(reason, pytrace=False)


def require_litert() -> None:
    """Fail (never skip) where LiteRT or its converter is missing, naming the install line."""
    from edgebench.backends.litert import missing_converter, missing_package

    reason = missing_package() or missing_converter()
    if reason:
        pytest.fail(reason, pytrace=False)


def require_onnxruntime():
    """Fail (never skip) where the ONNX extra is missing, naming the install line."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"{exc.name} is missing: pip install 'edgebench[onnx]'", pytrace=False)


def require_executorch() -> None:
    """Fail (never skip) where the ExecuTorch extra is missing, naming the install line."""
    from edgebench.backends.executorch import missing_package

    reason = missing_package()
    if reason:
        pytest.fail(reason, pytrace=False)


# --- markers by what a test needs ------------------------------------------------------------------------------------
#: Registered in pyproject.toml.  The marks are read off what each test uses rather than written on it, so a test is
#: marked by what it really starts; every test under ``tests/e2e/`` is ``e2e`` as well, and ``tests/unit/`` holds
#: none that needs a subprocess, a server, a cluster or a browser (``tests/unit/test_layout.py``), so the quick
#: subset is ``pytest tests/unit``, the same tests as ``pytest -m "not e2e"``.
NEEDS_FIXTURE = {"sshd": "ssh", "phones": "adb", "adbd_sim": "adb", "cli": "e2e", "cli_factory": "e2e"}
NEEDS_FIXTURE |= {"traced_lenet": "e2e"}
#: The marks a test in ``tests/unit/`` may not carry: each starts a process or a server.
END_TO_END = ("e2e", "ssh", "adb", "ray", "browser")
E2E_FOLDER = Path(__file__).resolve().parent / "e2e"
UNIT_FOLDER = Path(__file__).resolve().parent / "unit"
#: The docs examples' stage (``pytest -m docs_examples``): every test in it lives here, and none elsewhere.
DOCS_FOLDER = E2E_FOLDER / "docs"
#: Names whose use means the real component: the Ray cluster, headless Chromium, the CLI harness.
NEEDS_NAME = {"LocalCluster": "ray", "ray": "ray", "Browser": "browser", "chromium_path": "browser", "Edgebench": "e2e"}
NEEDS_NAME |= {"MNN": "mnn", "onnxruntime": "onnxruntime", "require_onnxruntime": "onnxruntime", "require_mnn": "mnn"}
NEEDS_NAME |= {"require_litert": "litert", "ai_edge_litert": "litert", "litert_cache": "litert"}
NEEDS_NAME |= {"require_executorch": "executorch"}
#: Backend names given as text (``--backend mnn``) and modules imported whole by a test module.
NEEDS_TEXT = {"mnn": "mnn", "onnxruntime": "onnxruntime", "litert": "litert", "executorch": "executorch"}
NEEDS_TEXT |= {"executorch-portable": "executorch"}
NEEDS_MODULE = {"MNN": "mnn", "edgebench.backends.mnn": "mnn", "onnxruntime": "onnxruntime", "ray": "ray"}
NEEDS_MODULE |= {"edgebench.backends.onnxruntime": "onnxruntime", "edgebench.backends.litert": "litert"}
NEEDS_MODULE |= {"ai_edge_litert": "litert"}
NEEDS_MODULE |= {"executorch": "executorch", "edgebench.backends.executorch": "executorch"}


def _code_words(code: Any, names: set[str], texts: set[str]) -> None:
    names.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, str):
            texts.add(const)
        elif hasattr(const, "co_names"):
            _code_words(const, names, texts)


def _words(functions: list[Any], namespace: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The names and text constants of ``functions``, following calls to helpers of the test suite (a module-level
    ``start`` that runs ``python -m edgebench``), so a test is marked by what its helpers start too."""
    names: set[str] = set()
    texts: set[str] = set()
    seen: set[int] = set()
    todo = list(functions)
    while todo:
        fn = inspect.unwrap(todo.pop())
        code = getattr(fn, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        found: set[str] = set()
        _code_words(code, found, texts)
        names |= found
        scope = {**namespace, **getattr(fn, "__globals__", {})}
        for name in found:
            helper = scope.get(name)
            if callable(helper) and getattr(helper, "__module__", "").startswith("tests"):
                todo.append(helper.__init__ if inspect.isclass(helper) else helper)
    return names, texts


def _runs_the_cli(names: set[str], texts: set[str]) -> bool:
    """A subprocess of the ``edgebench`` command (``[sys.executable, "-m", "edgebench", ...]`` or ``-c`` and
    ``edgebench.cli``), written inline."""
    return "executable" in names and any(t == "edgebench" or "edgebench.cli" in t for t in texts)


def _module_needs(module: Any) -> set[str]:
    needs = set()
    for value in vars(module).values():
        origin = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
        if isinstance(origin, str):
            needs |= {
                mark for prefix, mark in NEEDS_MODULE.items() if origin == prefix or origin.startswith(prefix + ".")
            }
    return needs


def needs_of(item: pytest.Item) -> set[str]:
    """What ``item`` needs beyond Python and torch: its fixtures, the names and backend names its code (and its
    suite helpers and fixtures) use, and what its module imports."""
    fixturenames = set(getattr(item, "fixturenames", ()))
    needs = {mark for fixture, mark in NEEDS_FIXTURE.items() if fixture in fixturenames}
    functions = [item.function] if isinstance(item, pytest.Function) else []
    for name in fixturenames:
        for definition in item._fixtureinfo.name2fixturedefs.get(name, ()):
            if getattr(definition.func, "__module__", "").startswith("tests"):
                functions.append(definition.func)
    names, texts = _words(functions, vars(item.module) if getattr(item, "module", None) else {})
    needs |= {mark for name, mark in NEEDS_NAME.items() if name in names}
    needs |= {mark for text, mark in NEEDS_TEXT.items() if text in texts}
    if _runs_the_cli(names, texts):
        needs.add("e2e")
    if getattr(item, "module", None) is not None:
        needs |= _module_needs(item.module)
    return needs


def marks_of(item: pytest.Item) -> set[str]:
    """The marks ``item`` gets: what it needs, ``e2e`` for every test under ``tests/e2e/``, and ``docs_examples`` for
    those under ``tests/e2e/docs/`` (a stage of its own: pyproject's ``addopts`` deselects them from a plain run)."""
    marks = needs_of(item)
    parents = Path(str(item.path)).resolve().parents
    if E2E_FOLDER in parents:
        marks.add("e2e")
    if DOCS_FOLDER in parents:
        marks.add("docs_examples")
    return marks


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The docs stage (``pytest -m docs_examples``) collects only ``tests/e2e/docs/``: every test it runs is there
    (:func:`marks_of`), and collecting the other 1,800 tests only to deselect them cost each xdist worker ~14 CPU-s
    here (their modules' imports and assertion rewriting, which ``PYTHONDONTWRITEBYTECODE`` keeps from being cached).
    """
    if config.getoption("markexpr", "") != "docs_examples":
        return None
    path = collection_path.resolve()
    if path == DOCS_FOLDER or DOCS_FOLDER in path.parents or path in DOCS_FOLDER.parents:
        return None
    return True


def misplaced_marks(path: Path, marks: set[str]) -> set[str]:
    """The marks that keep a test at ``path`` out of ``tests/unit/``: what starts a process, server, cluster or
    browser.  Empty for a test elsewhere, or one that needs none of them."""
    if UNIT_FOLDER not in Path(path).resolve().parents:
        return set()
    return marks & set(END_TO_END)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A unit test that starts a process fails before it runs, naming where it belongs, so ``tests/unit`` stays the
    quick subset (see tests/unit/test_layout.py)."""
    found = misplaced_marks(Path(str(item.path)), {m.name for m in item.iter_markers()})
    if found:
        pytest.fail(f"this test is {', '.join(sorted(found))} (see tests/conftest.py): move it to tests/e2e/", False)


#: The marks whose tests share a component started once per process (the Ray cluster, browser, emulated phones and
#: adb server, converted MNN, LiteRT and ExecuTorch models and exported ONNX models, sshd), costliest to start first.
SHARED_COMPONENTS = ("ray", "browser", "adb", "mnn", "litert", "executorch", "onnxruntime", "ssh")


def xdist_groups(marks: dict[pytest.Item, set[str]]) -> dict[pytest.Item, str]:
    """The xdist group of each test (pyproject's ``--dist loadgroup``: a group runs on one worker): a module stays
    whole on one worker, so its module-scoped fixtures (a shared store, a traced trial) are built once, and the
    modules that use one shared component run on one worker, so the component starts once.  A module's group is
    the costliest component any of its tests uses, else the module itself."""
    by_module: dict[str, set[str]] = {}
    for item, found in marks.items():
        by_module.setdefault(str(item.path), set()).update(found)
    group_of = {path: next((m for m in SHARED_COMPONENTS if m in found), path) for path, found in by_module.items()}
    return {item: group_of[str(item.path)] for item in marks}


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    marks = {item: marks_of(item) for item in items}
    for item, group in xdist_groups(marks).items():
        for mark in sorted(marks[item]):
            item.add_marker(mark)
        item.add_marker(pytest.mark.xdist_group(group))
