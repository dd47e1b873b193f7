"""Input channels and sources: regular files and folders only, bounded, checked before copying."""
from __future__ import annotations

import os
import socket

import pytest
from jobkit import CPU, nothing_written

from qhybrid.errors import SpecError
from qhybrid.jobs import channels
from qhybrid.submit import Job


@pytest.fixture
def job_script(write_script):
    return write_script("ok.py", "print('hi')\n")


def _refused(home, script, input_data, match):
    with pytest.raises(SpecError, match=match) as err:
        Job.create(CPU, script, input_data=input_data, in_process=True)
    assert "\n" not in str(err.value) and nothing_written(home)


def test_device_file_is_refused(home, job_script):
    _refused(home, job_script, "/dev/zero", "is a device")


def test_fifo_and_socket_inside_a_folder_are_refused(home, job_script, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    os.mkfifo(data / "pipe")
    _refused(home, job_script, {"data": data}, "is a FIFO")
    (data / "pipe").unlink()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(data / "sock"))
    try:
        _refused(home, job_script, {"data": data}, "is a socket")
    finally:
        sock.close()


def test_symlink_leaving_the_tree_is_refused(home, job_script, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "passwd").symlink_to("/etc/passwd")
    _refused(home, job_script, {"data": data}, "points outside")


def test_symlink_loop_is_refused(home, job_script, tmp_path):
    data = tmp_path / "data"
    (data / "a").mkdir(parents=True)
    (data / "a" / "up").symlink_to(data)
    _refused(home, job_script, {"data": data}, "symlink loop")


def test_size_cap_is_configurable(home, job_script, tmp_path, monkeypatch):
    data = tmp_path / "big.bin"
    data.write_bytes(b"x" * 5000)
    monkeypatch.setenv(channels.MAX_INPUT_ENV, "4096")
    _refused(home, job_script, data, "more than")
    monkeypatch.setenv(channels.MAX_INPUT_ENV, "ten")
    _refused(home, job_script, data, "QHYBRID_MAX_INPUT_BYTES='ten'")
    monkeypatch.setenv(channels.MAX_INPUT_ENV, "10000")
    assert Job.create(CPU, job_script, input_data=data, in_process=True).state() == "COMPLETED"


def test_a_link_inside_the_tree_is_copied(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.txt").write_text("12")
    (data / "y.txt").symlink_to(data / "x.txt")
    assert channels.measure(data, what="input") == 4
    assert channels.DEFAULT_MAX_INPUT_BYTES == 10 * 2**30
