"""The requirements.txt policy: nested files inside the source folder only, pip options by a list,
local files hashed into the environment's cache key (issue 23)."""
from __future__ import annotations

from pathlib import Path

import pytest
from jobkit import CPU, make_wheel, nothing_written

from qhybrid import Job
from qhybrid.errors import SpecError
from qhybrid.jobs import environments


def _source(tmp_path: Path, requirements: str, files: dict[str, str] | None = None) -> Path:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "__init__.py").write_text("")
    (src / "main.py").write_text("print('ran')\n")
    (src / "requirements.txt").write_text(requirements)
    for name, text in (files or {}).items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    return src


@pytest.mark.parametrize("line", ["-r /etc/passwd", "--requirement=/etc/passwd", "-c ../outside.txt",
                                  "-r../outside.txt"])
def test_nested_files_outside_the_source_are_refused_before_anything_is_written(tmp_path, home, line):
    (tmp_path / "outside.txt").write_text("secret==1\n")
    src = _source(tmp_path, f"{line}\n")
    with pytest.raises(SpecError, match=r"is outside the job's source folder") as info:
        Job.create(CPU, src, entry_point="src.main")
    assert "\n" not in str(info.value) and "root:" not in str(info.value) and "secret" not in str(info.value)
    assert nothing_written(home)


def test_a_link_out_of_the_source_is_refused(tmp_path, home):
    src = _source(tmp_path, "-r extra.txt\n")
    (src / "extra.txt").symlink_to("/etc/passwd")
    with pytest.raises(SpecError, match="outside the job's source folder"):
        Job.create(CPU, src, entry_point="src.main")


@pytest.mark.parametrize("line", ["-e .", "--editable=./pkg", "--global-option=--x", "--config-settings a=b",
                                  "--src /tmp", "--user"])
def test_options_outside_the_list_are_refused_in_one_line(tmp_path, home, line):
    src = _source(tmp_path, f"{line}\n")
    option = line.split("=")[0].split()[0]
    with pytest.raises(SpecError, match=f"pip option '{option}' is not allowed.*allowed: .*--index-url") as info:
        Job.create(CPU, src, entry_point="src.main")
    assert "\n" not in str(info.value) and nothing_written(home)


def test_nested_files_beside_it_are_inlined_and_local_paths_made_absolute(tmp_path):
    wheel = make_wheel(tmp_path / "src" / "wheels")
    src = _source(tmp_path, "-r extra.txt  # more\n--index-url https://pypi.org/simple\n-c sub/pins.txt\n",
                  {"extra.txt": f"--no-index\n--find-links wheels\nqhtinypkg==1.0\n./wheels/{wheel.name}\n",
                   "sub/pins.txt": "qhtinypkg<2\n"})
    parsed = environments.parsed_requirements(src)
    assert parsed.lines == ["--no-index", f"--find-links {src.resolve() / 'wheels'}", "qhtinypkg==1.0",
                            str(wheel.resolve()), "--index-url https://pypi.org/simple"]
    assert parsed.constraints == ["qhtinypkg<2"]
    extra = environments.attach(src, None)["environment"]
    assert extra["requirements"] == parsed.lines and extra["constraints"] == ["qhtinypkg<2"]


def test_a_changed_local_wheel_changes_the_cache_key(tmp_path):
    wheels = make_wheel(tmp_path / "wheels").parent
    src = _source(tmp_path, f"--no-index\n--find-links {wheels}\nqhtinypkg==1.0\n")
    before = environments.attach(src, None)["environment"]["key"]
    assert environments.attach(src, None)["environment"]["key"] == before  # stable
    make_wheel(wheels, version="1.0").write_bytes(b"a different wheel, same name")
    assert environments.attach(src, None)["environment"]["key"] != before
    (tmp_path / "b").mkdir()
    src2 = _source(tmp_path / "b", "pkg @ file://" + str(make_wheel(tmp_path / "w2")) + "\n")
    key2 = environments.attach(src2, None)["environment"]["key"]
    (tmp_path / "w2" / "qhtinypkg-1.0-py3-none-any.whl").write_bytes(b"changed")
    assert environments.attach(src2, None)["environment"]["key"] != key2


@pytest.mark.slow  # a real environment build (about 10 s); the parsing is covered above
def test_a_nested_requirements_file_beside_it_installs(tmp_path, home):
    wheels = make_wheel(tmp_path / "src" / "wheels").parent
    src = _source(tmp_path, "-r extra.txt\n", {"extra.txt": "--no-index\n--find-links wheels\nqhtinypkg==1.0\n"})
    (src / "main.py").write_text("import qhtinypkg\nfrom qhybrid.jobs import save_job_result\n"
                                 "save_job_result({'v': qhtinypkg.VERSION})\n")
    assert wheels.is_dir()
    job = Job.create(CPU, src, entry_point="src.main").wait(timeout=300)
    assert job.state() == "COMPLETED", job.describe()["failure_reason"]
    assert job.result() == {"v": "1.0"}
