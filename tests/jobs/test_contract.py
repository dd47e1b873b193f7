"""The contract: persisted-data codec (pickle only on request), checkpoint names, private files."""
from __future__ import annotations

import base64
import json
import os
import pickle
import stat

import pytest

from qhybrid.errors import PersistedDataError, PickleRefusedError
from qhybrid.jobs import contract


class _Marker:
    """Unpickling this creates a folder: proof that code from the file ran."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def _pickled_doc(tmp_path, marker):
    payload = base64.b64encode(pickle.dumps(_Marker(str(marker)), protocol=4)).decode("ascii")
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"braketSchemaHeader": contract.SCHEMA_HEADER,
                                "dataDictionary": {"x": payload}, "dataFormat": "pickled_v4"}))
    return path


def test_pickled_file_runs_no_code_unless_allowed(tmp_path):
    marker = tmp_path / "ran"
    path = _pickled_doc(tmp_path, marker)
    with pytest.raises(PersistedDataError, match="allow_pickle=True") as err:
        contract.read_persisted(path)
    assert "\n" not in str(err.value) and not marker.exists()
    # Braket's deserialize_values raises RuntimeError here: code catching that catches ours too
    assert isinstance(err.value, PickleRefusedError) and isinstance(err.value, RuntimeError)
    assert isinstance(err.value, ValueError)
    contract.read_persisted(path, allow_pickle=True)
    assert marker.exists()


def test_plaintext_roundtrip_and_unknown_format():
    doc = json.loads(contract.persisted({"a": [1, 2]}))
    assert doc["dataFormat"] == "plaintext" and contract.decode(doc) == {"a": [1, 2]}
    with pytest.raises(PersistedDataError, match="data_format 'yaml'"):
        contract.persisted({"a": 1}, "yaml")


@pytest.mark.parametrize("text", ['{"dataDictionary": {"a": 1', "", "[1, 2]", '{"dataDictionary": 5}'])
def test_truncated_or_foreign_file_is_one_clear_line(tmp_path, text):
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(PersistedDataError) as err:
        contract.read_persisted(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["/etc/passwd", "../other", "a/b", "job\n", "", "-x", 5])
def test_checkpoint_job_names_are_names_not_paths(name):
    with pytest.raises(PersistedDataError, match="invalid job name"):
        contract.checkpoint_file(name)


@pytest.mark.parametrize("suffix", ["x/../..", "../up", "a/b", "..", "ok\n", "/abs"])
def test_checkpoint_suffixes_cannot_leave_the_folder(suffix):
    with pytest.raises(PersistedDataError, match="checkpoint_file_suffix"):
        contract.checkpoint_file("job-a", suffix)


def test_checkpoint_file_names():
    assert contract.checkpoint_file("job-a") == "job-a.json"
    assert contract.checkpoint_file("job-a", "last.v2") == "job-a_last.v2.json"


def test_names_match_the_whole_string():
    assert contract.is_job_name("qaoa-run-1") and not contract.is_job_name("qaoa-run-1\n")
    assert contract.CHANNEL_RE.fullmatch("data") and not contract.CHANNEL_RE.fullmatch("data\n")


def test_write_atomic_is_private(tmp_path):
    path = tmp_path / "f.json"
    contract.write_atomic(path, "{}")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() == "{}"
