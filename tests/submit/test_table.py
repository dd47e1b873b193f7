"""The built-in workloads' table: found by their script, each with its settings parser and pre-flight."""
from __future__ import annotations

import pytest

from qhybrid.devices import Target, resolve
from qhybrid.errors import DeviceError, MemoryLimitError, SpecError
from qhybrid.workloads import qaoa, qml, table


def test_the_table_finds_built_in_workloads_by_script_and_entry_point(tmp_path):
    assert table.find(qaoa.__file__).name == "qaoa"
    assert table.find(qml.__file__, "qml").name == "qml"
    assert table.find(qaoa.__file__, "qaoa:main") is None  # another entry point of the file: a script
    other = tmp_path / "qaoa.py"
    other.write_text("")
    assert table.find(other) is None  # a user's qaoa.py is a script


def test_each_entry_parses_its_settings():
    with pytest.raises(SpecError, match="unknown hyperparameter 'nodes'"):
        table.WORKLOADS["qaoa"].parse_settings({"nodes": "3"})
    assert table.WORKLOADS["qaoa"].parse_settings({"n_nodes": "5", "n_edges": "4"}).n_nodes == 5


def test_qaoa_preflight_reads_the_graph_file_and_the_memory(tmp_path):
    w = table.WORKLOADS["qaoa"]
    cpu = resolve("local:qhybrid/qhybrid.cpu")
    bad = tmp_path / "g.json"
    bad.write_text("{not json")
    with pytest.raises(SpecError, match="cannot read graph"):
        w.preflight(w.parse_settings({}), cpu, input_data={"input-graph": str(bad)})
    with pytest.raises(MemoryLimitError):
        w.preflight(w.parse_settings({"n_nodes": "34", "n_edges": "40"}), cpu, input_data={})


def test_qml_preflight_asks_the_chunk_rule_for_this_process_share(monkeypatch):
    """26 wires, complex128, two states a sample on numba (2 GiB): 4 GiB free fits one rank, not two."""
    from qhybrid.sim import memory

    monkeypatch.setattr(memory, "available_bytes", lambda device, **kw: 4 << 30)
    w = table.WORKLOADS["qml"]
    settings = w.parse_settings({"nwires": "26", "batch_size": "4"})
    cpu = Target("qhybrid", "qhybrid.cpu", "cpu", False, "numba")
    w.preflight(settings, cpu, input_data={})
    with pytest.raises(MemoryLimitError, match=r"26 wires \(complex128\) need 2.00 GiB per sample"):
        w.preflight(settings, cpu, input_data={}, processes=2)


def test_a_target_travels_as_a_record_without_its_kernel_set():
    target = resolve("local:qhybrid/qhybrid.gpu")
    record = target.record()
    assert "kernels" not in record and Target.from_record(record) == target


def test_an_uninstalled_gpu_simulator_resolves_only_for_the_estimate():
    from qhybrid.devices import available_devices

    if "lightning.gpu" in available_devices()["pennylane"]:
        pytest.skip("lightning.gpu is installed here")
    with pytest.raises(DeviceError, match="lightning.gpu"):
        resolve("local:pennylane/lightning.gpu")
    assert resolve("local:pennylane/lightning.gpu", installed=False).needs_gpu
