"""Which representation a request's `Accept` header asks for, as kube-apiserver negotiates it
(staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go with the
goautoneg parser it uses, and RequestScope.AllowsMediaTypeTransform in handlers/rest.go), and
the Table options of the query (`includeObject`, meta/v1beta1/validation ValidateTableOptions).

The clauses are tried best first (by q, then the more specific ones); the first one a served
media type matches and whose parameters the endpoint allows wins. `as`/`g`/`v` ask for a
conversion: Table (JSON or YAML only), PartialObjectMetadata or PartialObjectMetadataList, in
meta.k8s.io v1 or v1beta1; any other conversion, or `stream` other than `watch`, rules a clause
out. No clause left is 406 Not Acceptable. Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

# What kube-apiserver serves for built-in resources. The simulator writes every body as JSON:
# a client that negotiated YAML or protobuf gets JSON, labelled as such (Content-Type).
SERVED = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
_STREAMS = {"application/json", "application/vnd.kubernetes.protobuf"}  # YAML has no framer
_TABLE_MEDIA = {"application/json", "application/yaml"}
META_GROUP = "meta.k8s.io"
META_VERSIONS = ("v1", "v1beta1")
CONVERSIONS = ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")
INCLUDE_OBJECT = ("Metadata", "Object", "None", "")


class NotAcceptable(Exception):
    """406: no representation the client accepts can be served."""


class InvalidTableOptions(Exception):
    """400: the Table options of the query are invalid."""


@dataclass(frozen=True, slots=True)
class Target:
    """A conversion the client asked for: `kind` in meta.k8s.io/`version`."""

    kind: str
    version: str

    @property
    def api_version(self) -> str:
        return f"{META_GROUP}/{self.version}"


@dataclass(slots=True)
class Clause:
    type: str
    subtype: str
    q: float = 1.0
    params: dict[str, str] = field(default_factory=dict)


def _weight(text: str) -> float:
    """strconv.ParseFloat of a `q` value, 0 when it does not parse (no spaces, no `_`)."""
    try:
        return float(text) if text == text.strip() and "_" not in text else 0.0
    except ValueError:
        return 0.0


def parse_accept(header: str) -> list[Clause]:
    """goautoneg.ParseAccept: comma-separated media ranges with `;k=v` parameters (`q` is the
    weight, unparsable weights are 0), best first."""
    clauses: list[Clause] = []
    for part in header.split(","):
        media, *params = part.strip(" ").split(";")
        kinds = media.split("/")
        main = kinds[0].strip(" ")
        if len(kinds) == 1 and main == "*":
            clause = Clause(main, "*")
        elif len(kinds) == 2:
            clause = Clause(main, kinds[1].strip(" "))
        else:
            continue
        for param in params:
            key, sep, value = param.partition("=")
            if not sep:
                continue
            if key.strip(" ") == "q":
                clause.q = _weight(value)
            else:
                clause.params[key.strip(" ")] = value.strip(" ")
        clauses.append(clause)
    # accept_slice.Less: higher q first, then a concrete type, then a concrete subtype.
    clauses.sort(key=lambda c: (-c.q, c.type == "*", c.subtype == "*"))
    return clauses


def _conversion(params: dict[str, str]) -> tuple[bool, Target | None]:
    """(allowed, target) for a clause's `as`/`g`/`v` against what resource endpoints allow."""
    if not {"as", "g", "v"} & params.keys():
        return True, None
    kind, group, version = params.get("as", ""), params.get("g", ""), params.get("v", "")
    if group != META_GROUP or version not in META_VERSIONS or kind not in CONVERSIONS:
        return False, None
    return True, Target(kind, version)


def _options(clause: Clause, media: str) -> tuple[bool, Target | None]:
    """acceptMediaTypeOptions: whether `media` can answer the clause, and the conversion."""
    stream = clause.params.get("stream", "")
    if stream and (stream != "watch" or media not in _STREAMS):
        return False, None
    allowed, target = _conversion(clause.params)
    if not allowed or (target is not None and target.kind == "Table" and media not in _TABLE_MEDIA):
        return False, None
    return True, target


def _matches(clause: Clause, media: str) -> bool:
    main, sub = media.split("/", 1)
    return (clause.type, clause.subtype) in ((main, sub), (main, "*"), ("*", "*"))


def negotiate(header: str | None) -> Target | None:
    """The conversion asked for (None: the object itself); NotAcceptable when nothing fits."""
    if not header:
        return None
    for clause in parse_accept(header):
        if clause.q <= 0:  # q=0 rejects a media type (RFC 9110 12.5.1)
            continue
        for media in SERVED:
            if _matches(clause, media):
                allowed, target = _options(clause, media)
                if allowed:
                    return target
    raise NotAcceptable(f"only the following media types are accepted: {', '.join(SERVED)}")


def include_object(query: dict[str, str]) -> str:
    """TableOptions.includeObject of the query, validated as ValidateTableOptions does."""
    value = query.get("includeObject", "")
    if value not in INCLUDE_OBJECT:
        raise InvalidTableOptions(
            "Unable to convert to Table as requested: includeObject: Invalid value: "
            f"{json.dumps(value, ensure_ascii=False)}: must be 'Metadata', 'Object', 'None', "
            "or empty"
        )
    return value
