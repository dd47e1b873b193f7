"""The kernel cache: one folder per qhybrid version and kernel sources, superseded ones pruned safely."""
from __future__ import annotations

import ast
import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import qhybrid
from qhybrid import kernel_cache

PACKAGE = Path(qhybrid.__file__).resolve().parent
CALLEE = "from qhybrid.sim.jit import njit\n\n\n@njit(inline='always')\ndef bump(x):\n    return x + {step}\n"
CALLER = ("from qhybrid.sim.jit import njit\n\nfrom ._probe_callee import bump\n\n\n"
          "@njit(cache=True)\ndef twice_bumped(x):\n    return 2 * bump(x)\n")
RUN = ("import numba; from qhybrid.sim._probe_caller import twice_bumped; "
       "print(twice_bumped(1), numba.config.CACHE_DIR)")


@pytest.fixture
def package_copy(tmp_path):
    """A copy of qhybrid (sources only) with a cached caller in one file and its inlined callee
    in another, and an environment that imports it."""
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "qhybrid", ignore=shutil.ignore_patterns("__pycache__", "*.nb?"))
    (src / "qhybrid" / "sim" / "_probe_callee.py").write_text(CALLEE.format(step=1))
    (src / "qhybrid" / "sim" / "_probe_caller.py").write_text(CALLER)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    return src / "qhybrid", env


def _run(env) -> tuple[int, Path]:
    out = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    value, where = out.stdout.split()
    return int(value), Path(where)


@pytest.mark.slow  # two processes that load numba and compile: ~3 s
def test_a_changed_callee_in_another_file_is_compiled_anew(package_copy, tmp_path):
    package, env = package_copy
    value, first = _run(env)
    assert value == 4 and first.parent == tmp_path / "cache"
    assert list(first.rglob("*twice_bumped*.nbi"))  # cached: numba alone would load it again
    (package / "sim" / "_probe_callee.py").write_text(CALLEE.format(step=2))
    value, second = _run(env)
    assert value == 6 and second != first and second.parent == first.parent


def test_key_follows_the_kernel_sources_and_the_version(package_copy, monkeypatch):
    package, _ = package_copy
    here = kernel_cache.key()
    assert kernel_cache.KEY.fullmatch(here) and here.startswith(f"kernels-{qhybrid.__version__}-")
    kernel_cache.key.cache_clear()
    try:
        monkeypatch.setattr(kernel_cache, "_PACKAGE", package)
        copied = kernel_cache.key()
        kernel_cache.key.cache_clear()
        with open(package / "sim" / "walsh.py", "a", encoding="utf-8") as f:
            f.write("# changed\n")
        changed = kernel_cache.key()
        assert changed != copied
        kernel_cache.key.cache_clear()
        for not_kernels in ("sim/fuse.py", "qml/model.py", "cli/doctor.py"):
            with open(package / not_kernels, "a", encoding="utf-8") as f:
                f.write("# changed\n")
        assert kernel_cache.key() == changed  # editing them recompiles nothing
        kernel_cache.key.cache_clear()
        monkeypatch.setattr(qhybrid, "__version__", "9.9")
        assert kernel_cache.key() == "kernels-9.9-" + changed.rsplit("-", 1)[1]
    finally:
        monkeypatch.undo()
        kernel_cache.key.cache_clear()
    assert kernel_cache.key() == here


def _qhybrid_imports(path: Path) -> set[str]:
    """The qhybrid modules ``path`` imports (relative imports resolved), as paths like ``sim/jit.py``."""
    rel = path.relative_to(PACKAGE)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            module = list(rel.parent.parts)[:len(rel.parent.parts) - node.level + 1]
            module += node.module.split(".") if node.module else []
        elif node.module and node.module.startswith("qhybrid."):
            module = node.module.split(".")[1:]
        else:
            continue
        for parts in [module] + [module + [a.name] for a in node.names]:
            if (PACKAGE / ("/".join(parts) + ".py")).is_file():
                found.add("/".join(parts) + ".py")
    return found


def test_every_kernel_is_in_the_digest_and_so_is_what_it_imports():
    """Every module that compiles numba code is a kernel module, and so is every qhybrid module a
    kernel module imports (a constant baked into a kernel changes the digest when it changes)."""
    digested = {rel for rel, _ in kernel_cache.kernel_sources()}
    numba_code = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
                  if "@njit" in (text := p.read_text(encoding="utf-8")) or "@register" in text
                  or "@intrinsic" in text}
    assert {"sim/fastplanar.py", "sim/walsh.py", "qaoa/numba_kernels.py"} <= numba_code <= digested
    imported = set().union(*(_qhybrid_imports(PACKAGE / rel) for rel in digested))
    assert {"sim/walsh.py", "sim/bitops.py"} <= imported
    assert imported - {"kernel_cache.py"} <= digested


def test_base_is_numba_cache_dir_or_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "nb"))
    assert kernel_cache.base_dir() == tmp_path / "nb"
    assert kernel_cache.cache_dir() == tmp_path / "nb" / kernel_cache.key()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "nb" / "kernels-0.0.1-0123456789abcdef"))
    assert kernel_cache.base_dir() == tmp_path / "nb"  # a parent's key folder: keyed beside it
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kernel_cache.cache_dir() == tmp_path / "xdg" / "qhybrid" / kernel_cache.key()


def _folder(base: Path, name: str, age: float) -> Path:
    folder = base / name
    folder.mkdir()
    (folder / "k.nbi").write_bytes(b"x")
    (folder / kernel_cache.IN_USE).touch()
    os.utime(folder / kernel_cache.IN_USE, (age, age))
    return folder


def test_prune_keeps_the_current_the_recent_and_the_held(tmp_path):
    base = tmp_path
    current = _folder(base, "kernels-0.1.0-" + "0" * 16, 1.0)  # oldest of all, but current
    old = [_folder(base, f"kernels-0.1.0-{i:016x}", 1000.0 + i) for i in range(1, 7)]
    (base / "user-stuff").mkdir()
    (base / "kernels-not-a-key").mkdir()
    held = os.open(old[0] / kernel_cache.IN_USE, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_SH)  # another process still runs from the oldest one
    try:
        removed = kernel_cache.prune(base, keep=current)
    finally:
        os.close(held)
    kept = {p.name for p in base.iterdir()}
    assert set(removed) == {old[1].name, old[2].name}
    assert kept == {current.name, old[0].name, *(p.name for p in old[3:]), "user-stuff", "kernels-not-a-key"}
    assert kernel_cache.prune(base, keep=current) == [old[0].name]  # released: now it goes too


def test_open_cache_holds_its_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel_cache, "_held", {})
    folder = kernel_cache.open_cache()
    assert folder == tmp_path / kernel_cache.key() and (folder / kernel_cache.IN_USE).exists()
    fd = os.open(folder / kernel_cache.IN_USE, os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
        os.close(kernel_cache._held[folder])


def test_an_unwritable_cache_folder_does_not_stop_the_engine(monkeypatch, tmp_path):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    monkeypatch.setattr(kernel_cache, "_held", {})
    assert kernel_cache.open_cache() == tmp_path / "a-file" / "cache" / kernel_cache.key()
    assert kernel_cache._held == {}


HOLD = "import sys, time; sys.stdin.read(); time.sleep(0.2)"  # holds inherited descriptors until told


def test_compiling_waits_for_the_process_holding_the_lock(monkeypatch, tmp_path):
    """A lock taken for a child (hold_compiling, its descriptor passed on) keeps others out until
    that child exits; then compiling's block runs. The block never runs beside a live holder."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    fd = kernel_cache.hold_compiling("entry")
    assert fd is not None
    child = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, pass_fds=(fd,))
    os.close(fd)
    try:
        assert kernel_cache.hold_compiling("entry") is None  # held by the child alone now
        assert kernel_cache.hold_compiling("other") is not None  # one lock per name
        child.stdin.close()  # the child sleeps a little more, then exits
        with kernel_cache.compiling("entry"):
            assert child.poll() is not None
    finally:
        child.kill()
        child.wait()
    with kernel_cache.compiling("entry"):  # free: at once
        pass


def test_compiling_runs_at_once_for_the_holder_it_was_given_to(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    fd = kernel_cache.hold_compiling("adopted")
    monkeypatch.setitem(kernel_cache._compiling, "adopted", fd)  # as kernel_cache.adopt, undone after
    with kernel_cache.compiling("adopted"):  # its own lock: no wait on itself
        assert kernel_cache.hold_compiling("adopted") is None
    os.close(fd)


def test_compiling_passes_a_lock_held_too_long(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    fd = kernel_cache.hold_compiling("stuck")
    ran = False
    with kernel_cache.compiling("stuck", wait=0.05):
        ran = True
    assert ran
    os.close(fd)


def test_release_lets_go_of_an_adopted_lock_at_once(monkeypatch, tmp_path):
    """A child compiling several kernels ahead releases each lock as soon as its kernel is cached:
    others go on while it compiles the next."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    fd = kernel_cache.hold_compiling("first")
    kernel_cache.adopt("first", fd)
    try:
        assert kernel_cache.hold_compiling("first") is None  # held (flock: per open file)
        kernel_cache.release("first")
        assert "first" not in kernel_cache._compiling
        again = kernel_cache.hold_compiling("first")
        assert again is not None  # free now
        os.close(again)
    finally:
        kernel_cache._compiling.pop("first", None)
    kernel_cache.release("never-adopted")  # nothing to let go of: nothing happens
