"""ListOptions of a LIST or WATCH checked, and a watch's start worked out, as kube-apiserver does.

Re-derived from:
- staging/src/k8s.io/apimachinery/pkg/apis/meta/internalversion/validation/validation.go
  (ValidateListOptions, validateWatchOptions): the errors, their fields and words, answered as
  `NewInvalid(ListOptions.meta.k8s.io, "")` by the handlers (endpoints/handlers/get.go);
- staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (Watch,
  getStartResourceVersionForWatchLockedFunc, getBookmarkAfterResourceVersionLockedFunc,
  waitUntilWatchCacheFreshAndForceAllEvents): which events a watch starts with;
- the WatchList feature gate's defaults by release (pkg/features/kube_features.go,
  versioned specs: beta and on in 1.32, off in 1.33, on again from 1.34).

A "watch-list" request (`sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`,
`allowWatchBookmarks=true`) streams the current objects as ADDED events, then one BOOKMARK whose
metadata carries the annotation `k8s.io/initial-events-end: "true"` and the resourceVersion of
that state, then the changes after it, on one connection: client-go's reflector builds its cache
from it instead of a LIST.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.simulator.apiserver.errors import ApiError, FieldError, invalid
from app.simulator.apiserver.version import KubeVersion

NOT_OLDER_THAN, EXACT = "NotOlderThan", "Exact"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def watch_list_enabled(version: KubeVersion) -> bool:
    """The WatchList feature gate's default in the release served (1.33 turned it off)."""
    return version.minor != 33


def _bool(text: str | None) -> bool | None:
    """A boolean query parameter as the apiserver's query decoder reads it (absent: None)."""
    if text is None:
        return None
    return text.strip().lower() in ("true", "1", "t", "y", "yes")


def _invalid(errors: list[FieldError]) -> ApiError:
    err = invalid("ListOptions", "meta.k8s.io", "", errors)
    if err.details is not None:
        err.details.pop("name", None)  # an empty name is omitted from the Status, as in kube
    return err


def _forbidden(field: str, detail: str) -> FieldError:
    return FieldError(field, "FieldValueForbidden", detail)


def _not_supported(field: str, value: str, allowed: list[str]) -> FieldError:
    shown = ", ".join(f'"{v}"' for v in allowed)
    return FieldError(field, "FieldValueNotSupported", f"supported values: {shown}", value)


def check_list(q: dict[str, str]) -> None:
    """ValidateListOptions for a LIST (watch=false)."""
    errors = []
    match = q.get("resourceVersionMatch") or ""
    if match:
        if not q.get("resourceVersion"):
            errors.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if q.get("continue"):
            errors.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
        if match not in (EXACT, NOT_OLDER_THAN):
            errors.append(
                _not_supported("resourceVersionMatch", match, [EXACT, NOT_OLDER_THAN, ""])
            )
        if match == EXACT and q.get("resourceVersion") == "0":
            errors.append(
                _forbidden(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if "sendInitialEvents" in q:
        errors.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    if errors:
        raise _invalid(errors)


@dataclass(frozen=True)
class WatchStart:
    """How a watch begins: with the current objects as ADDED events (`initial`), then, when
    `initial_end`, the bookmark annotated k8s.io/initial-events-end; or from `from_rv` on."""

    initial: bool
    initial_end: bool
    from_rv: int | None  # None: the store's current resourceVersion


def check_watch(q: dict[str, str], version: KubeVersion) -> WatchStart:
    """validateWatchOptions, then the start the watch cache gives these options."""
    errors = []
    match = q.get("resourceVersionMatch") or ""
    send = _bool(q.get("sendInitialEvents"))
    if send is not None:
        if match != NOT_OLDER_THAN:
            errors.append(
                _forbidden(
                    "resourceVersionMatch",
                    f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}",
                )
            )
        if not watch_list_enabled(version):
            errors.append(
                _forbidden(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for watch unless the WatchList feature gate "
                    "is enabled",
                )
            )
    if match:
        if send is None:
            errors.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided",
                )
            )
        if match != NOT_OLDER_THAN:
            errors.append(_not_supported("resourceVersionMatch", match, [NOT_OLDER_THAN]))
        if q.get("continue"):
            errors.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
    if errors:
        raise _invalid(errors)
    rv = q.get("resourceVersion") or ""
    parsed = _parse_rv(rv)
    bookmarks = _bool(q.get("allowWatchBookmarks")) is True
    if send is None:
        # Legacy: no resourceVersion or "0" starts with synthetic ADDED events of everything
        # (and no end bookmark); an explicit one starts after it.
        if rv in ("", "0"):
            return WatchStart(True, False, None)
        return WatchStart(False, False, parsed)
    if send:
        return WatchStart(True, bookmarks, None)
    # sendInitialEvents=false: no initial state; "" (consistent) and "0" (any) start now.
    return WatchStart(False, False, None if rv in ("", "0") else parsed)


def _parse_rv(rv: str) -> int:
    if rv in ("", "0"):
        return 0
    try:
        return int(rv)
    except ValueError:
        raise ApiError(400, f'invalid resource version "{rv}"') from None
