"""The OpenAPI 3 document of the REST API, served at /api/v1/openapi.json.

Written by hand next to the routes (tests/api/test_openapi.py checks that every route is in it and
nothing else is, and schemathesis checks that the answers agree with it).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from app.core.conditions import TYPES as CONDITION_TYPES
from app.core.policy import (
    CONTAINER_MODES,
    CONTROLLED_VALUES,
    DEFAULT_PLACEMENT,
    PLACEMENTS,
    TARGET_KINDS,
)
from app.core.recommend.strategies import NAMES as STRATEGY_NAMES
from app.core.update_mode import UPDATE_MODES
from app.core.update_policy import BOOST_TYPES, CHANGE_REQUIREMENTS
from app.documents.update_fields import WINDOW_FIELDS
from app.store.audit import ACTIONS

bp = Blueprint("openapi", __name__)

NAME = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", "maxLength": 253}
NAMESPACE = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}
KIND_PATTERN = "^[A-Za-z]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?$"
API_VERSION_PATTERN = (
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"  # group/
    "[a-z]([-a-z0-9]*[a-z0-9])?$"  # version
)
LABEL_SELECTOR = {  # metav1.LabelSelector (app.documents.selector validates the keys and values)
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "matchLabels": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
        "matchExpressions": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "required": ["key", "operator"],
                "additionalProperties": False,
                "properties": {
                    "key": {"type": "string"},
                    "operator": {
                        "type": "string",
                        "enum": ["In", "NotIn", "Exists", "DoesNotExist"],
                    },
                    "values": {"type": ["array", "null"], "items": {"type": "string"}},
                },
            },
        },
    },
}
QUANTITY = {"type": ["string", "number"], "description": "a Kubernetes quantity", "example": "250m"}
RESOURCES = {
    "type": "object",
    "properties": {"cpu": QUANTITY, "memory": {**QUANTITY, "example": "512Mi"}},
    "additionalProperties": False,
}
READ_ONLY = {
    "version": {"type": "integer", "readOnly": True},
    "createdAt": {"type": "string", "format": "date-time", "readOnly": True},
    "updatedAt": {"type": "string", "format": "date-time", "readOnly": True},
}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def error(description: str) -> dict[str, Any]:
    return {"description": description, "content": json_content(ref("Error"))}


ERRORS = {
    "400": error(
        "a malformed request: JSON that does not parse (a field's JSON text too, named in"
        " details), an unknown query parameter"
    ),
    "401": error("no bearer token, or not a valid one"),
    "403": error("the token's user may not do this"),
    "503": error("the database or the token check is unavailable; retry"),
}
NOT_FOUND = {"404": error("no such object")}
WRITE_ERRORS = {
    "412": error("If-Match or the body's version does not match: it changed meanwhile"),
    "413": error("the body is larger than RIGHTSIZER_API_MAX_BODY_BYTES (default 1 MiB)"),
    "422": error("invalid fields, each named in details"),
}


def path_param(name: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": schema or {"type": "string"}}


def query_param(
    name: str, description: str, schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema or {"type": "string"},
    }


IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": "the ETag of the version you read; 412 if it changed since",
    "schema": {"type": "string"},
}


WARNING = {
    "description": 'what the write warns of, as kube-apiserver writes it: `299 - "text"` (a '
    "policy whose target is in a namespace rightsizer never sizes, or does not exist now); one "
    "header per warning",
    "schema": {"type": "string"},
}


def ok(
    description: str, schema: dict[str, Any], etag: bool = False, warns: bool = False
) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "content": json_content(schema)}
    if etag:
        out["headers"] = {"ETag": {"schema": {"type": "string"}}}
    if warns:
        out.setdefault("headers", {})["Warning"] = WARNING
    return out


def per_container(container: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A workload's document holding one entry per container (recommendations, histograms,
    history); `extra`: more top-level properties."""
    return {
        "type": "object",
        "required": ["namespace", "kind", "name", "containers"],
        "properties": {
            "namespace": {"type": "string"},
            "kind": {"type": "string"},
            "name": {"type": "string"},
            "containers": {"type": "array", "items": container},
            **(extra or {}),
        },
    }


def entry(required: list[str], fields: dict[str, Any]) -> dict[str, Any]:
    """One container's entry: its name and `fields`."""
    return {
        "type": "object",
        "required": required,
        "properties": {"name": {"type": "string"}, **fields},
    }


def crud(kind: str, plural: str, key_params: list[dict[str, Any]]) -> dict[str, Any]:
    """The collection and item paths of an editable resource (policies, scalers); a policy's
    writes may carry `Warning` headers."""
    doc, item = ref(f"{kind}Document"), ref(kind)
    warns = kind == "Policy"
    conflict = {"409": error(f"a {kind.lower()} with that name exists")}
    merge = {"application/merge-patch+json": {"schema": {"type": "object"}}}
    merge.update(json_content({"type": "object"}))
    return {
        "collection": {
            "post": {
                "summary": f"create a {kind.lower()}",
                "operationId": f"create{kind}",
                "requestBody": {"required": True, "content": json_content(item)},
                "responses": {
                    "201": ok("created", doc, etag=True, warns=warns),
                    **ERRORS,
                    **conflict,
                    **WRITE_ERRORS,
                },
            },
        },
        "item": {
            "parameters": key_params,
            "get": {
                "summary": f"one {kind.lower()}",
                "operationId": f"get{kind}",
                "responses": {"200": ok(kind.lower(), doc, etag=True), **ERRORS, **NOT_FOUND},
            },
            "put": {
                "summary": f"replace a {kind.lower()}",
                "operationId": f"replace{kind}",
                "parameters": [IF_MATCH],
                "requestBody": {"required": True, "content": json_content(item)},
                "responses": {
                    "200": ok("replaced", doc, etag=True, warns=warns),
                    **ERRORS,
                    **NOT_FOUND,
                    **WRITE_ERRORS,
                },
            },
            "patch": {
                "summary": f"change some fields of a {kind.lower()} (JSON merge patch)",
                "operationId": f"patch{kind}",
                "parameters": [IF_MATCH],
                "requestBody": {"required": True, "content": merge},
                "responses": {
                    "200": ok("patched", doc, etag=True, warns=warns),
                    **ERRORS,
                    **NOT_FOUND,
                    **WRITE_ERRORS,
                },
            },
            "delete": {
                "summary": f"delete a {kind.lower()}",
                "operationId": f"delete{kind}",
                "parameters": [IF_MATCH],
                "responses": {
                    "204": {"description": "deleted"},
                    **ERRORS,
                    **NOT_FOUND,
                    "412": WRITE_ERRORS["412"],
                },
            },
        },
    }


def update_schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    """The schemas of startupBoost and of the policy fields of app.documents.update_fields."""
    # null where a field is optional: absent, as Kubernetes reads it (and stored as written)
    boost = {
        "type": ["object", "null"],
        "additionalProperties": False,
        "description": "VPA's startupBoost: more CPU while a pod starts (docs/policies.md)",
        "properties": {
            "cpu": {
                "type": ["object", "null"],
                "required": ["type"],
                "additionalProperties": False,
                "properties": {
                    "type": {"type": "string", "enum": list(BOOST_TYPES)},
                    "factor": {"type": ["integer", "null"], "minimum": 1, "maximum": 2**31 - 1},
                    "quantity": {"type": ["string", "number", "null"], "example": "500m"},
                    "durationSeconds": {
                        "type": ["integer", "null"],
                        "minimum": 0,
                        "maximum": 2**31 - 1,
                    },
                },
            }
        },
    }
    fields = {
        "evictionRequirements": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["resources", "changeRequirement"],
                "additionalProperties": False,
                "properties": {
                    "resources": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"type": "string", "enum": ["cpu", "memory"]},
                    },
                    "changeRequirement": {"type": "string", "enum": list(CHANGE_REQUIREMENTS)},
                },
            },
        },
        "evictAfterOOMSeconds": {"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
        "inPlaceSkipDisruptionBudget": {"type": "boolean"},
        "startupBoost": boost,
        "observationWindow": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "description": "how long the updater watches before and after it acts "
            "(docs/policies.md, Observation window)",
            "properties": {
                name: {"type": ["integer", "null"], "minimum": least, "maximum": most}
                for name, _, least, most in WINDOW_FIELDS
            },
        },
    }
    return boost, fields


def schemas() -> dict[str, Any]:
    boost, update_fields = update_schemas()
    container_policy = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "containerName": {"type": "string", "example": "*"},
            "mode": {"type": "string", "enum": list(CONTAINER_MODES)},
            "minAllowed": {**RESOURCES, "type": ["object", "null"]},
            "maxAllowed": {**RESOURCES, "type": ["object", "null"]},
            "controlledResources": {
                "type": "array",
                "items": {"type": "string", "enum": ["cpu", "memory"]},
            },
            "controlledValues": {"type": "string", "enum": list(CONTROLLED_VALUES)},
            "integerCPU": {"type": "boolean", "description": "CPU rounded up to whole cores"},
            "startupBoost": boost,
        },
    }
    policy = {
        "type": "object",
        "required": ["name", "namespace"],
        "additionalProperties": False,
        "properties": {
            "name": NAME,
            "namespace": {"anyOf": [NAMESPACE, {"type": "string", "enum": ["*"]}]},
            "target": {
                "description": "one workload (kind and name; apiVersion for a kind other than "
                f"{', '.join(TARGET_KINDS)}: any controller with a /scale subresource), or "
                "every workload of the namespace whose pod template matches a label selector",
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["kind", "name"],
                        "additionalProperties": False,
                        "properties": {
                            "kind": {"type": "string", "pattern": KIND_PATTERN},
                            "name": NAME,
                            "apiVersion": {
                                "type": ["string", "null"],
                                "pattern": API_VERSION_PATTERN,
                            },
                        },
                    },
                    {
                        "type": "object",
                        "required": ["selector"],
                        "additionalProperties": False,
                        "properties": {"selector": LABEL_SELECTOR},
                    },
                ],
            },
            "updateMode": {"type": "string", "enum": [*UPDATE_MODES, "Auto"]},
            "minReplicas": {"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
            "containerPolicies": {"type": "array", "items": container_policy},
            **update_fields,
            "recommender": {
                "type": "string",
                "enum": list(STRATEGY_NAMES),
                "description": "the recommendation strategy (default vpa; docs/policies.md)",
            },
            "recommenderParams": {
                "type": "object",
                "description": 'the strategy\'s parameters, e.g. {"cpuPercentile": 90}',
                "additionalProperties": {"type": ["number", "boolean"]},
            },
            "nodeGroupLabel": {
                "type": ["string", "null"],
                "maxLength": 317,
                "example": "node.kubernetes.io/instance-type",
                "description": "size the DaemonSets it governs per value of this node label "
                "(docs/policies.md, Node groups)",
            },
            "clusters": {
                "description": "the clusters of the fleet it governs, by name or id, or by a "
                "label selector over the clusters' labels ({selector: {}}: every cluster); "
                "absent, the cluster whose API created it (docs/policies.md, Clusters)",
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["names"],
                        "additionalProperties": False,
                        "properties": {
                            "names": {
                                "type": "array",
                                "minItems": 1,
                                "items": {"type": "string", "pattern": "\\S", "maxLength": 253},
                            }
                        },
                    },
                    {
                        "type": "object",
                        "required": ["selector"],
                        "additionalProperties": False,
                        "properties": {"selector": LABEL_SELECTOR},
                    },
                ],
            },
            "placement": {
                "type": "string",
                "enum": list(PLACEMENTS),
                "default": DEFAULT_PLACEMENT,
                "description": "waterLevel: new pods go to the water-level scheduler when the "
                "chart runs it (docs/policies.md, Placement)",
            },
        },
    }
    scaler = {
        "type": "object",
        "required": ["name", "target", "params"],
        "additionalProperties": False,
        "properties": {
            "name": NAME,
            "target": {
                "type": "object",
                "required": ["namespace", "kind", "name"],
                "additionalProperties": False,
                "properties": {
                    "namespace": NAMESPACE,
                    "kind": {
                        "type": "string",
                        "enum": [
                            "Deployment",
                            "ReplicaSet",
                            "ReplicationController",
                            "StatefulSet",
                        ],
                    },
                    "name": NAME,
                },
            },
            "params": {
                "description": "cluster-proportional-autoscaler's ConfigMap JSON, one mode",
                "type": "object",
                "example": {"linear": {"coresPerReplica": 256, "nodesPerReplica": 16, "min": 1}},
            },
            "nodeSelector": {"type": "string", "example": "pool=system"},
            "enabled": {"type": "boolean"},
            "behavior": {"type": "object", "description": "HPA v2 behavior (optional)"},
        },
    }
    container = {
        "type": "object",
        "required": ["name", "target", "lowerBound", "upperBound", "uncappedTarget"],
        "properties": {
            "name": {"type": "string"},
            "target": RESOURCES,
            "lowerBound": RESOURCES,
            "upperBound": RESOURCES,
            "uncappedTarget": RESOURCES,
            "sampleCount": {"type": "integer"},
            "firstSampleTime": {"type": ["string", "null"]},
            "lastSampleTime": {"type": ["string", "null"]},
            "updateTime": {"type": ["string", "null"]},
            "currentRequests": RESOURCES,
            "difference": RESOURCES,
            "podRequests": {
                "type": "object",
                "description": "the live pods running the container and their requests together",
                "properties": {
                    "pods": {"type": "integer", "minimum": 0},
                    "cpu": {"type": "string", "example": "1500m"},
                    "memory": {"type": "string", "example": "1536Mi"},
                },
            },
            "conflicts": {"type": "object", "additionalProperties": {"type": "string"}},
            "history": {
                "type": "object",
                "description": (
                    "usage history between the first and last sample, against what the updater "
                    "needs before it acts (RIGHTSIZER_UPDATER_MIN_HISTORY_SECONDS): while not "
                    "`enough`, the bounds (VPA's, widened by 1 / days of history; `unknown` at "
                    "none) say little, and the updater does not act"
                ),
                "required": ["hours", "neededHours", "enough"],
                "properties": {
                    "hours": {"type": "number", "minimum": 0},
                    "neededHours": {"type": "number", "minimum": 0},
                    "enough": {"type": "boolean"},
                },
            },
            "excluded": {
                "type": "object",
                "description": (
                    "resource -> why rightsizer leaves it alone (an HPA scales it, the container "
                    "policy is Off or does not control it, the namespace is never sized): it "
                    "counts 0 in the savings"
                ),
                "additionalProperties": {"type": "string"},
            },
            "reason": {
                "type": "string",
                "description": "how the strategy reached the target",
                "example": "vpa: CPU p90 of usage (half-life 24h), memory p90 of daily peaks, ...",
            },
            "nodeGroups": {
                "type": "array",
                "description": "a DaemonSet sized per node group: the container in each group",
                "items": {
                    "type": "object",
                    "required": ["nodeGroup", "sampleCount"],
                    "properties": {
                        "nodeGroup": {
                            "type": "string",
                            "description": "the node label's value (<none>: nodes without it)",
                            "example": "m5.4xlarge",
                        },
                        "target": RESOURCES,
                        "lowerBound": RESOURCES,
                        "upperBound": RESOURCES,
                        "uncappedTarget": RESOURCES,
                        "pods": {"type": "integer", "minimum": 0},
                        "currentRequests": RESOURCES,
                        "sampleCount": {"type": "integer"},
                        "firstSampleTime": {"type": ["string", "null"]},
                        "lastSampleTime": {"type": ["string", "null"]},
                        "updateTime": {"type": ["string", "null"]},
                        "reason": {"type": "string"},
                    },
                },
            },
        },
    }
    histogram = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["cores", "bytes"]},
            "totalWeight": {"type": "number"},
            "referenceTime": {"type": ["string", "null"]},
            "buckets": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["start", "end", "weight"],
                    "properties": {
                        "start": {"type": "number"},
                        "end": {"type": "number"},
                        "weight": {"type": "number"},
                    },
                },
            },
        },
    }
    return {
        "Error": {
            "type": "object",
            "required": ["error", "message"],
            "properties": {
                "error": {"type": "string"},
                "message": {"type": "string"},
                "details": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["field", "message"],
                        "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                    },
                },
            },
        },
        "Policy": policy,
        "PolicyDocument": {
            "allOf": [{**policy, "additionalProperties": True}],
            "properties": READ_ONLY,
            "required": ["name", "namespace", "updateMode", "containerPolicies", "version"],
        },
        "Scaler": scaler,
        "ScalerDocument": {
            "allOf": [{**scaler, "additionalProperties": True}],
            "properties": {
                **READ_ONLY,
                "status": {
                    "type": "object",
                    "readOnly": True,
                    "properties": {
                        "lastProposed": {"type": ["integer", "null"]},
                        "lastApplied": {"type": ["integer", "null"]},
                        "lastRunTime": {"type": ["string", "null"]},
                        "message": {"type": ["string", "null"]},
                    },
                },
            },
            "required": ["name", "target", "params", "enabled", "version", "status"],
        },
        "Workload": per_container(
            container,
            {
                "replicas": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "live pods the recommender saw in its last run with one",
                },
                "nodeGroupLabel": {
                    "type": "string",
                    "description": "a DaemonSet sized per node group: the node label grouping it",
                },
                "estimatedSavingsPerReplica": {
                    "type": "object",
                    "description": "cores and GiB a pod frees on average (negative: needs more)",
                    "properties": {"cpuCores": {"type": "number"}, "memoryGiB": {"type": "number"}},
                },
                "savingsBasis": {
                    "type": "string",
                    "enum": ["policy", "policyOff", "defaultPolicy"],
                    "description": (
                        "what the savings assume: its policy acts, or (an estimate) what its "
                        "policy in updateMode Off, or a default policy without one, would change"
                    ),
                },
                "estimatedSavings": {
                    "type": "object",
                    "description": (
                        "cores and GiB the live pods together free: the sum over pods of "
                        "request - target (negative: they need more), over the resources "
                        "rightsizer would change (not those in a container's `excluded`)"
                    ),
                    "properties": {"cpuCores": {"type": "number"}, "memoryGiB": {"type": "number"}},
                },
                "conditions": {
                    "type": "array",
                    "description": "VPA's status.conditions and rightsizer's own",
                    "items": {
                        "type": "object",
                        "required": ["type", "status", "reason", "message"],
                        "properties": {
                            "type": {"type": "string", "enum": list(CONDITION_TYPES)},
                            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                            "reason": {"type": "string"},
                            "message": {"type": "string"},
                            "lastTransitionTime": {"type": ["string", "null"]},
                        },
                    },
                },
            },
        ),
        "Histograms": per_container(
            entry(
                ["name"],
                {
                    "sampleCount": {"type": "integer"},
                    "cpu": histogram,
                    "memory": histogram,
                    "error": {"type": "string"},
                },
            )
        ),
        "History": per_container(
            entry(
                ["name", "points"],
                {
                    "points": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["time", "target"],
                            "properties": {
                                "time": {"type": "string", "format": "date-time"},
                                "target": RESOURCES,
                                "requests": RESOURCES,
                                "usage": {
                                    "type": "object",
                                    "description": "percentiles of the usage samples since "
                                    "the point before, per resource: {p50, p90} quantities",
                                    "additionalProperties": {
                                        "type": "object",
                                        "properties": {
                                            "p50": {"type": "string"},
                                            "p90": {"type": "string"},
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            )
        ),
        "NodeSpreadPoint": {
            "type": "object",
            "description": "how far apart the nodes' levels (used / allocatable) were at a time",
            "required": [
                "time",
                "nodes",
                "cpuSpread",
                "cpuDeviation",
                "cpuHottest",
                "memorySpread",
                "memoryDeviation",
            ],
            "properties": {
                "time": {"type": "string", "format": "date-time"},
                "nodes": {"type": "integer", "description": "nodes with metrics then"},
                "cpuSpread": {"type": "number", "description": "max - min, a fraction"},
                "cpuDeviation": {"type": "number", "description": "standard deviation"},
                "cpuHottest": {"type": "number", "description": "the highest node's level"},
                "memorySpread": {"type": "number"},
                "memoryDeviation": {"type": "number"},
            },
        },
        "Event": {
            "type": "object",
            "required": ["id", "time", "actor", "action", "objectKind", "objectRef"],
            "properties": {
                "id": {"type": "integer"},
                "time": {"type": "string", "format": "date-time"},
                "actor": {"type": "string"},
                "action": {"type": "string"},
                "objectKind": {"type": "string"},
                "objectRef": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
        },
    }


def items_of(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["items"],
        "properties": {"items": {"type": "array", "items": schema}},
    }


CLUSTER = query_param(
    "cluster",
    "the cluster of the fleet to read, by id or name (default: the serving process's own); "
    "400 when no cluster of the database answers to it",
)


def amounts(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["cpuCores", "memoryGiB"],
        "properties": {
            "cpuCores": {"type": "number"},
            "memoryGiB": {"type": "number"},
            **(extra or {}),
        },
    }


def fleet_figures(extra: dict[str, Any]) -> dict[str, Any]:
    """A cluster's row of GET /api/v1/fleet, or the totals (app.api.fleet)."""
    counts = {
        k: {"type": "integer"} for k in ("workloads", "containers", "workloadsWithPods", "pods")
    }
    fields = {
        **counts,
        "requested": amounts(),
        "recommended": amounts(),
        "estimatedSavings": amounts(),
        "shortfall": amounts({"containers": {"type": "integer"}}),
        "lastRecommendationUpdate": {"type": ["string", "null"]},
        **extra,
    }
    return {"type": "object", "required": list(fields), "properties": fields}


def paths() -> dict[str, Any]:
    open_: dict[str, Any] = {"security": []}
    ns_filter = query_param("namespace", "only this namespace")
    policies = crud("Policy", "policies", [path_param("namespace"), path_param("name")])
    scalers = crud("Scaler", "scalers", [path_param("name")])
    for item in (policies["item"], scalers["item"]):
        item["get"]["parameters"] = [CLUSTER]
    workload_params = [path_param("namespace"), path_param("kind"), path_param("name")]
    text = {"text/plain": {"schema": {"type": "string"}}}
    return {
        "/healthz": {
            "get": {
                **open_,
                "summary": "liveness",
                "operationId": "healthz",
                "responses": {"200": ok("alive", {"type": "object"})},
            }
        },
        "/readyz": {
            "get": {
                **open_,
                "summary": "readiness: the database answers, or the webhook's cache is fresh",
                "description": (
                    '200 {"status": "ready"} when the database answers; 200 {"status": '
                    '"degraded", "degraded": ["database"], "message": ...} when it does not but '
                    "the webhook's cache is fresh (pods are still sized from it); 503 otherwise."
                ),
                "operationId": "readyz",
                "responses": {
                    "200": ok(
                        "ready, or degraded: the database is down, the webhook serves its cache",
                        {
                            "type": "object",
                            "required": ["status"],
                            "properties": {
                                "status": {"type": "string", "enum": ["ready", "degraded"]},
                                "degraded": {"type": "array", "items": {"type": "string"}},
                                "message": {"type": "string"},
                            },
                        },
                    ),
                    "503": error("the database does not answer and the webhook cache is stale"),
                },
            }
        },
        "/metrics": {
            "get": {
                **open_,
                "summary": "Prometheus metrics (text exposition format)",
                "operationId": "metrics",
                "responses": {"200": {"description": "metrics", "content": text}},
            }
        },
        "/api/v1/openapi.json": {
            "get": {
                **open_,
                "summary": "this document",
                "operationId": "openapi",
                "responses": {"200": ok("the OpenAPI document", {"type": "object"})},
            }
        },
        "/api/v1/recommendations": {
            "get": {
                "summary": "recommendations per workload",
                "operationId": "listRecommendations",
                "parameters": [
                    ns_filter,
                    query_param("kind", "only this workload kind"),
                    query_param("name", "only workloads of this name"),
                    CLUSTER,
                ],
                "responses": {"200": ok("workloads", items_of(ref("Workload"))), **ERRORS},
            }
        },
        "/api/v1/recommendations/{namespace}/{kind}/{name}": {
            "parameters": workload_params,
            "get": {
                "summary": "one workload's recommendation",
                "operationId": "getRecommendation",
                "parameters": [CLUSTER],
                "responses": {"200": ok("workload", ref("Workload")), **ERRORS, **NOT_FOUND},
            },
        },
        "/api/v1/workloads/{namespace}/{kind}/{name}/histogram": {
            "parameters": workload_params,
            "get": {
                "summary": "CPU and memory usage histograms behind the recommendation",
                "operationId": "getHistogram",
                "parameters": [CLUSTER],
                "responses": {"200": ok("histograms", ref("Histograms")), **ERRORS, **NOT_FOUND},
            },
        },
        "/api/v1/workloads/{namespace}/{kind}/{name}/history": {
            "parameters": workload_params,
            "get": {
                "summary": "the recommended target over time (hourly, 8 days), with the requests "
                "of the time",
                "operationId": "getHistory",
                "parameters": [CLUSTER],
                "responses": {"200": ok("history", ref("History")), **ERRORS, **NOT_FOUND},
            },
        },
        "/api/v1/policies": {
            "get": {
                "summary": "policies",
                "operationId": "listPolicies",
                "parameters": [ns_filter, CLUSTER],
                "responses": {"200": ok("policies", items_of(ref("PolicyDocument"))), **ERRORS},
            },
            **policies["collection"],
        },
        "/api/v1/policies/{namespace}/{name}": policies["item"],
        "/api/v1/scalers": {
            "get": {
                "summary": "proportional scalers",
                "operationId": "listScalers",
                "parameters": [CLUSTER],
                "responses": {"200": ok("scalers", items_of(ref("ScalerDocument"))), **ERRORS},
            },
            **scalers["collection"],
        },
        "/api/v1/scalers/{name}": scalers["item"],
        "/api/v1/scalers/{name}/preview": {
            "parameters": [path_param("name")],
            "get": {
                "summary": "what the scaler proposes now, and what its behavior allows",
                "operationId": "previewScaler",
                "responses": {
                    "200": ok(
                        "the preview",
                        {
                            "type": "object",
                            "required": ["current", "proposed", "allowedNow", "reason", "cluster"],
                            "properties": {
                                "current": {"type": "integer"},
                                "proposed": {"type": "integer"},
                                "allowedNow": {"type": "integer"},
                                "reason": {"type": "string"},
                                "cluster": {"type": "object"},
                            },
                        },
                    ),
                    "409": error("the stored scaler cannot be evaluated"),
                    **ERRORS,  # 503 also when the cluster cannot be reached
                    **NOT_FOUND,
                },
            },
        },
        "/api/v1/nodes/spread": {
            "get": {
                "summary": "the cluster's spread of node levels over time, oldest first",
                "operationId": "listNodeSpread",
                "parameters": [
                    query_param("since", "RFC 3339 time or unix seconds (inclusive)"),
                ],
                "responses": {
                    "200": ok(
                        "a point every 5 minutes for a week at most",
                        {
                            "type": "object",
                            "required": ["items"],
                            "properties": {
                                "items": {"type": "array", "items": ref("NodeSpreadPoint")},
                            },
                        },
                    ),
                    **ERRORS,
                },
            }
        },
        "/api/v1/fleet": {
            "get": {
                "summary": "every cluster of the database with its workloads, savings and risk, "
                "and the totals across clusters",
                "operationId": "getFleet",
                "responses": {
                    "200": ok(
                        "the fleet",
                        {
                            "type": "object",
                            "required": ["items", "totals"],
                            "properties": {
                                "items": {
                                    "type": "array",
                                    "items": fleet_figures(
                                        {
                                            "name": {"type": "string"},
                                            "id": {"type": ["string", "null"]},
                                            "self": {"type": "boolean"},
                                            "asOf": {"type": "string"},
                                            "computedBy": {"enum": ["leader", "request"]},
                                        }
                                    ),
                                },
                                "totals": fleet_figures(
                                    {
                                        "clusters": {"type": "integer"},
                                        "asOf": {"type": ["string", "null"]},
                                    }
                                ),
                            },
                        },
                    ),
                    **ERRORS,
                },
            }
        },
        "/api/v1/events": {
            "get": {
                "summary": "the audit trail, newest first",
                "operationId": "listEvents",
                "parameters": [
                    query_param(
                        "action",
                        "only this action (any other is a 400 listing these)",
                        {"type": "string", "enum": list(ACTIONS)},
                    ),
                    query_param("objectKind", "Policy, Scaler, Pod, ..."),
                    query_param("objectRef", "e.g. shop/web"),
                    query_param("actor", "who did it"),
                    query_param("since", "RFC 3339 time or unix seconds (inclusive)"),
                    query_param("until", "RFC 3339 time or unix seconds (exclusive)"),
                    query_param(
                        "limit",
                        "page size (default 100)",
                        {"type": "integer", "minimum": 1, "maximum": 1000},
                    ),
                    query_param("continue", "the `continue` of the previous page"),
                    CLUSTER,
                ],
                "responses": {
                    "200": ok(
                        "a page of events",
                        {
                            "type": "object",
                            "required": ["items", "continue"],
                            "properties": {
                                "items": {"type": "array", "items": ref("Event")},
                                "continue": {"type": ["string", "null"]},
                            },
                        },
                    ),
                    **ERRORS,
                },
            }
        },
    }


def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "rightsizer",
            "version": "1",
            "description": "Recommendations, policies, proportional scalers and the audit trail. "
            "Writes need a bearer token; reads too unless RIGHTSIZER_PUBLIC_READS is on.",
        },
        "components": {
            "schemas": schemas(),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": paths(),
    }


@bp.get("/openapi.json")
def openapi() -> ResponseReturnValue:
    return jsonify(document())
