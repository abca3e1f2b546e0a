"""The workflows are the documented Python API: every name the package lists resolves, each workflow says what it
does, and importing the package imports none of them (a command's start pays only for what it runs)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import edgebench.workflows as workflows
from edgebench.store.rescue import NotStored


def test_every_listed_name_resolves_to_its_module():
    for name in workflows.__all__:
        value = getattr(workflows, name)
        if name != "NotStored":
            assert value.__module__ == f"edgebench.workflows.{workflows._API[name]}", name


def test_every_workflow_function_and_record_has_a_docstring():
    undocumented = []
    for info in pkgutil.iter_modules(workflows.__path__):
        module = importlib.import_module(f"edgebench.workflows.{info.name}")
        assert inspect.getdoc(module), module.__name__
        for name, value in vars(module).items():
            defined_here = getattr(value, "__module__", None) == module.__name__
            if defined_here and not name.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value)):
                undocumented += [] if inspect.getdoc(value) else [f"{module.__name__}.{name}"]
    assert undocumented == []


def test_a_trial_the_store_refused_is_the_store_s_own_error():
    assert workflows.NotStored is NotStored


def test_importing_the_package_imports_no_workflow():
    code = "import sys, edgebench.workflows; print(sorted(m for m in sys.modules if m.startswith('edgebench.')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "edgebench.workflows." not in loaded
