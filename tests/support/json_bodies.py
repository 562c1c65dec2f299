"""The kubernetes client's calls with plain JSON, where its annotations name only its models.

`plain(body)`: a plain JSON body for the client's create, replace and eviction calls.
The client sends a dict as it is (`ApiClient.sanitize_for_serialization`), but its annotations
name only its models (`body: V1Pod`). The tests and benchmarks write the JSON the API server gets,
unknown or invalid fields included, so they pass dicts; this says so once, where mypy would
otherwise flag every call (setup.cfg's [mypy] section, CONTRIBUTING.md).

`json_object(answer)`: the JSON object a CustomObjectsApi call answers (annotated `object`).

`raw_answer(answer)`, `raw_body(answer)`: an answer asked with `_preload_content=False`, and its
bytes. The client then answers its urllib3 response, not the model its annotations name
(`V1PodList`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import urllib3


def plain(body: Mapping[str, Any]) -> Any:
    """`body` itself, typed for any `body` parameter of the client."""
    return body


def json_object(answer: object) -> dict[str, Any]:
    """`answer` itself, a CustomObjectsApi call's JSON object (annotated `object`)."""
    return cast(dict[str, Any], answer)


def raw_answer(answer: object) -> urllib3.HTTPResponse:
    """`answer` itself, a call's urllib3 response (`_preload_content=False`)."""
    return cast(urllib3.HTTPResponse, answer)


def raw_body(answer: object) -> bytes:
    """The body of `answer`, a call's urllib3 response (`_preload_content=False`)."""
    return raw_answer(answer).data
