"""The API server's Kubernetes minor version (GET /version), for the rules that differ by release:
in-place resize (app.core.sizing.resize_rules, and of pod-level resources
app.core.sizing.podlevel_resize) and pod-level resources
(app.core.sizing.podlimits.unset_request_is_zero)."""

from __future__ import annotations

import logging
from http.client import HTTPException
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

log = logging.getLogger(__name__)


def read_minor(version_api: Any) -> int | None:
    """`minor` of /version as a number ("33", or "33+" as some providers write it), None when it
    cannot be read (logged: the caller then applies the current release's rules)."""
    try:
        info = version_api.get_code()
        return int("".join(ch for ch in str(info.minor) if ch.isdigit()))
    except (ApiException, HTTPError, HTTPException, OSError, ValueError) as e:
        log.warning("cannot read the API server's version: %s", e)
        return None


def server_minor(api: Any) -> int | None:
    """`read_minor` through the API client `api`."""
    return read_minor(client.VersionApi(api))
