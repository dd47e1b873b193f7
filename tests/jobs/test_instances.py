"""Instance catalogue, user prices and cost arithmetic."""
from __future__ import annotations

import pytest

from qhybrid.errors import InstanceError
from qhybrid.jobs import instances


def test_catalogue_has_58_types_and_three_known_prices():
    cat = instances.catalogue()
    assert len(cat) == 58
    known = {k: v.usd_per_minute for k, v in cat.items() if v.usd_per_minute is not None}
    assert known == {"ml.m5.2xlarge": 0.00768, "ml.p3.2xlarge": 0.06375, "ml.p3.16xlarge": 0.4692}
    assert cat["ml.p3.2xlarge"].gpus == 1 and cat["ml.m5.large"].gpus == 0


def test_user_price_file(tmp_path, monkeypatch):
    path = tmp_path / "prices.toml"
    path.write_text('[prices]\n"ml.c5.xlarge" = 0.0034\n')
    monkeypatch.setenv("QHYBRID_PRICES", str(path))
    inst = instances.get_instance("ml.c5.xlarge")
    assert inst.usd_per_minute == 0.0034 and inst.price_source.startswith("user")
    assert instances.cost(60, inst, 2) == pytest.approx(0.0068)
    assert "ml.c5.xlarge" in instances.costs_elsewhere(10)


def test_default_price_file_in_home(_isolated_home):
    (_isolated_home / "prices.toml").write_text('[prices]\n"ml.c5.2xlarge" = 0.002\n')
    assert instances.get_instance("ml.c5.2xlarge").usd_per_minute == 0.002


def test_bad_price_file(tmp_path, monkeypatch):
    path = tmp_path / "prices.toml"
    path.write_text('[prices]\n"ml.c5.xlarg" = 0.0034\n')
    monkeypatch.setenv("QHYBRID_PRICES", str(path))
    with pytest.raises(InstanceError, match="did you mean 'ml.c5.xlarge'"):
        instances.catalogue()


def test_fallback_toml_parser():
    text = '# prices\n[prices]\n"ml.c5.xlarge" = 0.0034  # per minute\n'
    assert instances._parse_toml(text) == {"prices": {"ml.c5.xlarge": 0.0034}}


def test_unknown_price_stays_unknown():
    inst = instances.get_instance("ml.c5.xlarge")
    assert inst.usd_per_minute is None and instances.cost(100, inst) is None


def test_unknown_type_suggests_nearest():
    with pytest.raises(InstanceError, match="did you mean 'ml.p3.2xlarge'"):
        instances.get_instance("ml.p3.2xlarg")


def test_threads_are_capped_by_local_cores():
    inst = instances.get_instance("ml.m5.24xlarge")
    assert instances.threads_for(inst) == instances.local_cores()
    assert instances.threads_for(instances.get_instance("ml.t3.large"), processes=4) == 1
