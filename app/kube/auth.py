"""TokenReview and SubjectAccessReview: who a bearer token belongs to, and what they may do.

The API server answers both, so rightsizer honours the cluster's own identities and RBAC instead of
keeping users of its own. Errors never carry the token: a TokenReview echoes it in its body, so
only the status code and reason of a failed call are passed on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.kube.client import api_client


class ReviewFailed(RuntimeError):
    """The API server could not be asked (unreachable, or it refused rightsizer's own call)."""


@dataclass(frozen=True)
class ReviewedUser:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict)


class KubeReviewer:
    def __init__(self, kubeconfig: str | None = None) -> None:
        self._kubeconfig = kubeconfig or None
        self._client: client.ApiClient | None = None

    def _api(self) -> client.ApiClient:
        if self._client is None:
            try:
                self._client = api_client(self._kubeconfig)
            except RuntimeError as e:
                raise ReviewFailed(str(e)) from None
        return self._client

    def authenticate(self, token: str, audiences: list[str] | None = None) -> ReviewedUser | None:
        """The user the token belongs to, or None when the API server does not accept it."""
        body = client.V1TokenReview(
            spec=client.V1TokenReviewSpec(token=token, audiences=audiences or None)
        )
        try:
            resp = client.AuthenticationV1Api(self._api()).create_token_review(body)
        except ApiException as e:
            raise ReviewFailed(f"TokenReview failed: {e.status} {e.reason}") from None
        except Exception as e:  # connection errors: urllib3 and OSError subclasses
            raise ReviewFailed(f"TokenReview failed: {type(e).__name__}") from None
        status = resp.status
        if status is None or not status.authenticated or status.user is None:
            return None
        u = status.user
        return ReviewedUser(
            name=u.username or "",
            uid=u.uid or "",
            groups=tuple(u.groups or ()),
            extra={k: list(v) for k, v in (u.extra or {}).items()},
        )

    def allowed(
        self, user: ReviewedUser, verb: str, group: str, resource: str, namespace: str | None
    ) -> tuple[bool, str]:
        """(allowed, the authorizer's reason) for `verb` on `group/resource` in `namespace`."""
        body = client.V1SubjectAccessReview(
            spec=client.V1SubjectAccessReviewSpec(
                user=user.name,
                uid=user.uid or None,
                groups=list(user.groups) or None,
                extra=user.extra or None,
                resource_attributes=client.V1ResourceAttributes(
                    group=group, resource=resource, verb=verb, namespace=namespace or None
                ),
            )
        )
        try:
            resp = client.AuthorizationV1Api(self._api()).create_subject_access_review(body)
        except ApiException as e:
            raise ReviewFailed(f"SubjectAccessReview failed: {e.status} {e.reason}") from None
        except Exception as e:
            raise ReviewFailed(f"SubjectAccessReview failed: {type(e).__name__}") from None
        status = resp.status
        return bool(status and status.allowed), (status.reason or "") if status else ""
