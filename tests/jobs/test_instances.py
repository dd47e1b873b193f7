"""Instance catalogue, user prices and cost arithmetic."""
from __future__ import annotations

import pytest

from qhybrid.errors import InstanceError
from qhybrid.jobs import instances


def test_catalogue_has_58_types_and_27_dated_prices():
    cat = instances.catalogue()
    assert len(cat) == 58
    known = {k: v for k, v in cat.items() if v.usd_per_minute is not None}
    assert len(known) == 27
    assert {k: v.usd_per_minute for k, v in known.items() if v.price_kind == "braket"} == {
        "ml.m5.xlarge": 0.00383, "ml.m5.2xlarge": 0.00768, "ml.p3.2xlarge": 0.06375,
        "ml.p3.8xlarge": 0.2448, "ml.p3.16xlarge": 0.4692}
    assert all(v.price_kind in instances.PRICE_KINDS and v.price_source for v in known.values())
    assert cat["ml.p3.2xlarge"].gpus == 1 and cat["ml.m5.large"].gpus == 0
    assert cat["ml.m5.large"].price_kind == "sagemaker-training" and cat["ml.m5.large"].price_date == "2026-08-11"


def test_catalogue_carries_the_hardware_facts():
    cat = instances.catalogue()
    p3 = cat["ml.p3.16xlarge"]
    assert (p3.gpu_model, p3.gpu_memory_gib, p3.gpu_memory_bandwidth_gbs) == ("V100", 16.0, 900.0)
    assert (p3.cpu_generation, p3.cpu_socket_bandwidth_gbs) == ("Broadwell", 77.0)
    assert cat["ml.g4dn.xlarge"].cpu_generation == "" and cat["ml.g4dn.xlarge"].cpu_socket_bandwidth_gbs is None
    assert "retired" in p3.note


def test_approximate_prices_are_marked():
    c5 = instances.get_instance("ml.c5.xlarge")
    assert c5.approximate and instances.format_price(c5) == "≈0.00340"
    m5 = instances.get_instance("ml.m5.2xlarge")
    assert not m5.approximate and instances.format_price(m5) == "0.00768"
    assert instances.format_usd(0.5, approximate=True) == "≈$0.5000"
    assert instances.format_usd(None, approximate=True) == "unknown (no price)"


def test_a_price_needs_a_kind_and_a_blank_price_stays_unknown():
    row = {"instance_type": "ml.x", "vcpus": "2", "memory_gib": "8", "gpus": "0", "usd_per_minute": "0.1"}
    with pytest.raises(InstanceError, match="needs a kind"):
        instances.parse_row(row)
    with pytest.raises(InstanceError, match="needs a kind"):
        instances.parse_row({**row, "price_kind": "guess"})
    blank = instances.parse_row({**row, "usd_per_minute": "", "usd_per_hour": ""})
    assert blank.usd_per_minute is None and instances.cost(60, blank) is None


def test_user_price_file(tmp_path, monkeypatch):
    path = tmp_path / "prices.toml"
    path.write_text('[prices]\n"ml.c5.xlarge" = 0.0034\n')
    monkeypatch.setenv("QHYBRID_PRICES", str(path))
    inst = instances.get_instance("ml.c5.xlarge")
    assert inst.usd_per_minute == 0.0034 and inst.price_source.startswith("user")
    assert inst.price_kind == "user" and not inst.approximate
    assert instances.cost(60, inst, 2) == pytest.approx(0.0068)
    assert "ml.c5.xlarge" in instances.costs_elsewhere(10)


def test_default_price_file_in_home(_isolated_home):
    (_isolated_home / "prices.toml").write_text('[prices]\n"ml.c5n.2xlarge" = 0.002\n')
    assert instances.get_instance("ml.c5n.2xlarge").usd_per_minute == 0.002


def test_bad_price_file(tmp_path, monkeypatch):
    path = tmp_path / "prices.toml"
    path.write_text('[prices]\n"ml.c5.xlarg" = 0.0034\n')
    monkeypatch.setenv("QHYBRID_PRICES", str(path))
    with pytest.raises(InstanceError, match="did you mean 'ml.c5.xlarge'"):
        instances.catalogue()


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "0.0", "-0.001", '"0.01"', "true"])
def test_a_user_price_must_be_a_finite_number_above_zero(tmp_path, monkeypatch, value):
    path = tmp_path / "prices.toml"
    path.write_text(f'[prices]\n"ml.c5.xlarge" = {value}\n')
    monkeypatch.setenv("QHYBRID_PRICES", str(path))
    with pytest.raises(InstanceError, match=r"price of 'ml.c5.xlarge' must be a finite number > 0.*got") as err:
        instances.user_prices()
    assert "\n" not in str(err.value)
    with pytest.raises(InstanceError, match="price of 'ml.c5.xlarge'"):
        instances.get_instance("ml.c5.xlarge")  # never a $0 (or NaN) cost


@pytest.mark.parametrize("text", ["prices = 3\n", 'prices = "cheap"\n', "prices = [1, 2]\n"])
def test_prices_that_are_not_a_table_are_one_line(tmp_path, monkeypatch, text):
    path = tmp_path / "prices.toml"
    path.write_text(text)
    monkeypatch.setenv("QHYBRID_PRICES", str(path))
    with pytest.raises(InstanceError, match=r"'prices' must be a table .*\[prices\] section\), got") as err:
        instances.get_instance("ml.c5.xlarge")
    assert "\n" not in str(err.value)


def test_fallback_toml_parser():
    text = '# prices\n[prices]\n"ml.c5.xlarge" = 0.0034  # per minute\n'
    assert instances._parse_toml(text) == {"prices": {"ml.c5.xlarge": 0.0034}}


def test_unknown_price_stays_unknown():
    inst = instances.get_instance("ml.c5n.xlarge")
    assert inst.usd_per_minute is None and instances.cost(100, inst) is None


def test_unknown_type_suggests_nearest():
    with pytest.raises(InstanceError, match="did you mean 'ml.p3.2xlarge'"):
        instances.get_instance("ml.p3.2xlarg")


def test_threads_are_capped_by_local_cores():
    inst = instances.get_instance("ml.m5.24xlarge")
    assert instances.threads_for(inst) == instances.local_cores()
    assert instances.threads_for(instances.get_instance("ml.t3.large"), processes=4) == 1
