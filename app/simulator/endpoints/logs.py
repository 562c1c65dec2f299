"""`pods/{name}/log`: what kube-apiserver checks before it asks the node's kubelet for the logs
(kubernetes/kubernetes `pkg/registry/core/pod/strategy.go` LogLocation, `pkg/registry/core/pod/
rest/log.go`), then a Status saying the simulated kubelets have none to give.

The container must be named unless the pod has exactly one (400 listing the choices otherwise);
a pod not yet bound to a node has no logs and answers an empty stream, as kube-apiserver does.
For a bound pod the simulator answers 503 ServiceUnavailable: its kubelets run no containers, so
there is no log to stream (`kubectl logs` prints `Error from server (ServiceUnavailable): ...`).
"""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver.errors import ApiError, bad_request
from app.simulator.apiserver.resources import POD
from app.simulator.endpoints.messages import ApiContext, Request, Response


def handle(api: ApiContext, ns: str, name: str, req: Request) -> Response:
    if req.method != "GET":
        raise ApiError(
            405, f"the server does not allow this method on the requested resource ({req.method})"
        )
    pod = api.store.require(POD, ns, name).obj
    container = _container(pod, name, req.query.get("container", ""))
    if not pod["spec"].get("nodeName"):
        return Response(200, b"", content_type="text/plain")
    raise ApiError(
        503,
        f"container logs are not available in the simulated cluster: its kubelets run no "
        f'containers (pod "{name}" in namespace "{ns}", container "{container}")',
        "ServiceUnavailable",
    )


def _container(pod: dict[str, Any], name: str, wanted: str) -> str:
    spec = pod["spec"]
    containers: list[str] = [c["name"] for c in spec.get("containers") or []]
    inits = [c["name"] for c in spec.get("initContainers") or []]
    ephemeral = [c["name"] for c in spec.get("ephemeralContainers") or []]
    if wanted:
        if wanted not in containers + inits + ephemeral:
            raise bad_request(f"container {wanted} is not valid for pod {name}")
        return wanted
    if len(containers) == 1:
        return containers[0]
    if not containers:
        raise bad_request(f"a container name must be specified for pod {name}")
    message = (
        f"a container name must be specified for pod {name}, "
        f"choose one of: [{' '.join(containers)}]"
    )
    if inits:
        message += f" or one of the init containers: [{' '.join(inits)}]"
    if ephemeral:
        message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
    raise bad_request(message)
