"""Unit tests of protobuf request bodies (app.simulator.apiserver.protobuf)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.simulator.apiserver import protobuf, schema
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.protofields import FIELDS

# The body `kubectl create deployment x --image=nginx` (kubectl 1.33) sent, as `-v=8` shows it.
KUBECTL_DEPLOYMENT = Path(__file__).parent / "data" / "kubectl-create-deployment.hex"


def _from_hexdump(path: Path) -> bytes:
    return b"".join(
        bytes.fromhex(line.split("|")[0].split(None, 1)[1].replace(" ", ""))
        for line in path.read_text().splitlines()
        if line.strip()
    )


# A minimal protobuf writer, to build messages field by field.
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _len(number: int, data: bytes | str) -> bytes:
    raw = data.encode() if isinstance(data, str) else data
    return _varint(number << 3 | 2) + _varint(len(raw)) + raw


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    meta = _len(1, api_version) + _len(2, kind)
    return protobuf.MAGIC + _len(1, meta) + _len(2, raw) + _len(3, "") + _len(4, "")


def test_kubectls_create_deployment_decodes_to_the_json_kubectl_would_send() -> None:
    env = protobuf.envelope(_from_hexdump(KUBECTL_DEPLOYMENT))
    assert (env.api_version, env.kind) == ("apps/v1", "Deployment")
    labels = {"app": "x"}
    assert protobuf.decode("io.k8s.api.apps.v1.Deployment", env.raw) == {
        "metadata": {"name": "x", "creationTimestamp": None, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"creationTimestamp": None, "labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]},
            },
            "strategy": {},
        },
        "status": {},
    }


def test_a_pointer_keeps_its_zero_and_omitempty_drops_it() -> None:
    spec = _int(1, 0) + _int(5, 0)  # replicas (*int32) = 0, minReadySeconds (int32) = 0
    raw = _len(2, spec)
    decoded = protobuf.decode("io.k8s.api.apps.v1.Deployment", raw)
    assert decoded == {"spec": {"replicas": 0}}


def test_special_messages() -> None:
    created = _len(8, _int(1, 1_700_000_000))  # ObjectMeta.creationTimestamp
    grace = _int(10, -1)  # deletionGracePeriodSeconds, a negative int64
    meta = protobuf.decode("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", created + grace)
    assert meta == {"creationTimestamp": "2023-11-14T22:13:20Z", "deletionGracePeriodSeconds": -1}
    surge = _len(2, _int(1, 1) + _len(3, "30%"))  # maxSurge IntOrString, the string form
    unavailable = _len(1, _int(1, 0) + _int(2, 2))
    rolling = protobuf.decode("io.k8s.api.apps.v1.RollingUpdateDeployment", unavailable + surge)
    assert rolling == {"maxUnavailable": 2, "maxSurge": "30%"}
    limits = _len(1, _len(1, "cpu") + _len(2, _len(1, "500m"))) + _len(1, _len(1, "memory"))
    assert protobuf.decode("io.k8s.api.core.v1.ResourceRequirements", limits) == {
        "limits": {"cpu": "500m", "memory": "0"}
    }
    secret = _len(2, _len(1, "k") + _len(2, b"\x00\xff"))
    assert protobuf.decode("io.k8s.api.core.v1.Secret", secret) == {
        "data": {"k": base64.b64encode(b"\x00\xff").decode()}
    }


def test_inline_structs_lists_and_unknown_fields() -> None:
    # Volume embeds VolumeSource (field 2) inline; field 99 is of a later release: skipped.
    volume = _len(1, "v") + _len(2, _len(2, b"")) + _int(99, 7)
    assert protobuf.decode("io.k8s.api.core.v1.Volume", volume) == {"name": "v", "emptyDir": {}}
    # A repeated int32, unpacked (proto2's default) and packed.
    values = _int(3, 1) + _int(3, 2) + _len(3, _varint(3) + _varint(4))
    rule = protobuf.decode("io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement", values)
    assert rule["values"] == [1, 2, 3, 4]


def test_delete_options_as_client_go_sends_them() -> None:
    options = _int(1, 0) + _len(2, _len(1, "u-1")) + _len(4, "Foreground") + _len(5, "All")
    body = _envelope("v1", "DeleteOptions", options)
    env = protobuf.envelope(body)
    assert protobuf.decode("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", env.raw) == {
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "u-1"},
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


@pytest.mark.parametrize(
    "body",
    [b'{"kind":"Pod"}', protobuf.MAGIC + b"\x0a\x05ab", protobuf.MAGIC + b"\x0b"],
    ids=["json", "truncated", "group wire type"],
)
def test_what_is_not_protobuf_is_a_400(body: bytes) -> None:
    with pytest.raises(ApiError) as e:
        protobuf.envelope(body)
    assert e.value.code == 400


def test_a_kind_without_a_table_is_a_415_not_a_guess() -> None:
    with pytest.raises(ApiError) as e:
        protobuf.decode("io.k8s.api.core.v1.Service", b"")
    assert e.value.code == 415


def test_the_table_describes_every_field_of_every_message_the_schemas_have() -> None:
    """protofields.py and the OpenAPI definitions name the same fields (inline structs count as
    their parent's), so nothing a client sends is lost for want of a number."""
    defs = schema.definitions(36)

    def names(message: str) -> set[str]:
        out: set[str] = set()
        for f in protobuf._fields(message).values():
            out |= names(f.kind[1:]) if not f.name else {f.name}
        return out

    for message in FIELDS:
        name = (
            "io.k8s.apimachinery.pkg.apis.meta.v1." + message.removeprefix("meta.v1.")
            if message.startswith("meta.v1.")
            else "io.k8s.api." + message
        )
        if name not in defs.defs:
            continue  # an inline struct (VolumeSource, ProbeHandler ...): no definition of its own
        props = set(defs.get(name).get("properties", {})) - {"apiVersion", "kind"}
        assert names(message) - {"apiVersion", "kind"} == props, message


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_integers_round_trip_through_varints(n: int) -> None:
    assert protobuf.decode("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", _int(7, n)) == (
        {"generation": n} if n else {}
    )
