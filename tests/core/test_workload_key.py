"""WorkloadKey: a value (equal, hashed and ordered by its fields) whose hash is kept."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from app.core.workload_key import WorkloadKey, sorted_keys


def test_a_key_is_a_value_of_its_three_fields() -> None:
    a, b = WorkloadKey("shop", "Deployment", "web"), WorkloadKey("shop", "Deployment", "web")
    assert a == b and a is not b and hash(a) == hash(b) == hash(("shop", "Deployment", "web"))
    assert {a: 1}[b] == 1
    assert WorkloadKey("shop", "Deployment", "api") < a
    assert [f.name for f in dataclasses.fields(a)] == ["namespace", "kind", "name"]
    assert dataclasses.asdict(a) == {"namespace": "shop", "kind": "Deployment", "name": "web"}
    assert repr(a) == "WorkloadKey(namespace='shop', kind='Deployment', name='web')"
    assert dataclasses.replace(a, name="api") == WorkloadKey("shop", "Deployment", "api")
    assert hash(dataclasses.replace(a, name="api")) == hash(("shop", "Deployment", "api"))


def test_a_copy_from_another_process_hashes_as_this_one_does() -> None:
    """The kept hash is not carried in a pickle: string hashes differ between processes."""
    code = (
        "import pickle, sys; from app.core.workload_key import WorkloadKey; "
        "sys.stdout.buffer.write(pickle.dumps(WorkloadKey('shop', 'Deployment', 'web')))"
    )
    env = {"PYTHONHASHSEED": "12345"}
    data = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, env=env, cwd="."
    ).stdout
    key = pickle.loads(data)
    assert hash(key) == hash(("shop", "Deployment", "web"))
    assert {WorkloadKey("shop", "Deployment", "web"): 1}[key] == 1
    assert hash(copy.deepcopy(key)) == hash(key)


@given(
    st.lists(
        st.builds(
            WorkloadKey,
            st.sampled_from(["", "a", "b"]),
            st.sampled_from(["Job", "Job.x"]),
            st.text(max_size=3),
        )
    )
)
def test_sorted_keys_is_sorted(keys: list[WorkloadKey]) -> None:
    assert sorted_keys(keys) == sorted(keys)
