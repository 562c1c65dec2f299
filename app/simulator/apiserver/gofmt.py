"""How Go's fmt prints a decoded JSON value (`%v`/`%+v` of the interface{} that encoding/json
gives: map[string]interface{}, []interface{}, nil, bool, float64, string), as kube-apiserver's
messages show them: a strategic merge patch's errors (apimachinery
`pkg/util/strategicpatch/patch.go`) and the patch map of a failed strategic patch
(`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go`). Maps print with their keys
sorted, as fmt sorts them: `map[a:1 b:[x y]]`; null prints as `<nil>`."""

from __future__ import annotations

from typing import Any


def go_format(value: Any) -> str:
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
