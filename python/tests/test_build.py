# What `pip install ./python` builds: the build scikit-build-core runs
# (python/pyproject.toml's settings, SKBUILD set) is configured here and its
# commands for the module listed without compiling anything: only what the
# module needs (no crash checker, no test checkers), at -O2 as the docs say.
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYTHON_DIR)


def pyproject():
    path = os.path.join(PYTHON_DIR, "pyproject.toml")
    if sys.version_info >= (3, 11):
        import tomllib
        with open(path, "rb") as f:
            return tomllib.load(f)
    tomli = pytest.importorskip("tomli")
    with open(path, "rb") as f:
        return tomli.load(f)


def tool(name):
    found = os.environ.get("PMINDEX_" + name.upper()) or shutil.which(name)
    assert found, f"{name} is needed to configure the pip build"
    return found


def run(args):
    # Without the sanitizer runtime the module's tests preload (cmake and the
    # compiler checks it runs are not built with it).
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    return subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture(scope="module")
def module_commands(tmp_path_factory):
    sk = pyproject()["tool"]["scikit-build"]
    build = tmp_path_factory.mktemp("skbuild")
    defines = [f"-D{k}={v}" for k, v in sk["cmake"]["define"].items()]
    run([tool("cmake"), "-S", os.path.join(PYTHON_DIR, sk["cmake"]["source-dir"]), "-B", str(build), "-G", "Ninja",
         f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}", "-DSKBUILD=2", f"-DCMAKE_BUILD_TYPE={sk['cmake']['build-type']}",
         f"-DPython_EXECUTABLE={sys.executable}", *defines])
    lines = []
    for target in sk["build"]["targets"]:
        out = run([tool("ninja"), "-C", str(build), "-t", "commands", target])
        lines += [line for line in out.splitlines() if " -c " in line]
    assert lines
    return lines


def test_pip_build_compiles_only_what_the_module_needs(module_commands):
    sources = [line.split(" -c ")[-1].split()[0] for line in module_commands]
    assert any("/src/art/permart/" in s for s in sources)  # the indexes are in
    assert any("/python/src/module.cpp" in s for s in sources)
    left_out = [s for s in sources if "/src/crash/" in s or "/src/testing/" in s]
    assert not left_out, left_out


def test_pip_build_is_o2_as_documented(module_commands):
    for line in module_commands:
        if "/nanobind/" in line:
            continue  # nanobind's own runtime, built with its settings
        flags = line.split()
        assert "-O2" in flags and "-O3" not in flags and "-Os" not in flags, line
        assert "-DNDEBUG" in flags, line
    with open(os.path.join(REPO, "docs", "python.md")) as f:
        docs = f.read()
    assert "`-O2`" in docs and "-O3" not in docs
    assert "pip install -v ./python" in docs  # how to see the build's progress
