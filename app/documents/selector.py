"""A label selector as users write it (`matchLabels`, `matchExpressions`) -> app.core.selectors.

Validated as apimachinery validates a metav1.LabelSelector (`pkg/apis/meta/v1/validation/
validation.go` ValidateLabelSelector, ValidateLabelSelectorRequirement, ValidateLabels): keys are
qualified names (an optional DNS-subdomain prefix and `/`, then at most 63 characters of
alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric), values at most 63 such characters
or empty, operators In, NotIn, Exists, DoesNotExist, values required for In and NotIn and
forbidden for Exists and DoesNotExist. Each problem names its field.
"""

from __future__ import annotations

import re
from typing import Any

from app.core.selectors import OPERATORS, LabelSelector, Requirement
from app.documents.fields import FieldError, unknown_fields

_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
SELECTOR_FIELDS = {"matchLabels", "matchExpressions"}
REQUIREMENT_FIELDS = {"key", "operator", "values"}


def label_key_problem(key: Any) -> str | None:
    """IsQualifiedName's verdict, None when valid."""
    if not isinstance(key, str) or not key:
        return "must be a non-empty label key"
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _PREFIX.fullmatch(prefix)):
        return "the prefix must be a DNS subdomain (e.g. 'example.com')"
    if len(name) > 63 or not _NAME.fullmatch(name):
        return (
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character, at most 63 characters "
            "(e.g. 'app' or 'example.com/tier')"
        )
    return None


def label_value_problem(value: Any) -> str | None:
    """IsValidLabelValue's verdict, None when valid."""
    if not isinstance(value, str):
        return "must be a string (quote numbers and booleans in YAML)"
    if value and (len(value) > 63 or not _NAME.fullmatch(value)):
        return (
            "a label value must be empty or consist of at most 63 alphanumeric characters, "
            "'-', '_' or '.', starting and ending with an alphanumeric character"
        )
    return None


def parse_selector(doc: Any, path: str, errors: list[FieldError]) -> LabelSelector:
    """The selector; its problems are appended to `errors`."""
    if not isinstance(doc, dict):
        errors.append(
            FieldError(path, "must be an object with matchLabels and/or matchExpressions")
        )
        return LabelSelector()
    errors += unknown_fields(doc, SELECTOR_FIELDS, path)
    requirements: list[Requirement] = []
    labels = doc.get("matchLabels")
    if labels is not None and not isinstance(labels, dict):
        errors.append(FieldError(f"{path}.matchLabels", "must be a map of label keys to values"))
    for key, value in (labels or {}).items() if isinstance(labels, dict) else ():
        where = f"{path}.matchLabels.{key}"
        problem = label_key_problem(key) or label_value_problem(value)
        if problem:
            errors.append(FieldError(where, problem))
        else:
            requirements.append(Requirement(key, "In", frozenset({value})))
    expressions = doc.get("matchExpressions")
    if expressions is not None and not isinstance(expressions, list):
        errors.append(FieldError(f"{path}.matchExpressions", "must be a list"))
    for i, expr in enumerate(expressions if isinstance(expressions, list) else []):
        found = _requirement(expr, f"{path}.matchExpressions[{i}]", errors)
        if found is not None:
            requirements.append(found)
    return LabelSelector(tuple(requirements))


def _requirement(doc: Any, path: str, errors: list[FieldError]) -> Requirement | None:
    if not isinstance(doc, dict):
        errors.append(FieldError(path, "must be an object with key, operator and values"))
        return None
    before = len(errors)
    errors += unknown_fields(doc, REQUIREMENT_FIELDS, path)
    key, operator, values = doc.get("key"), doc.get("operator"), doc.get("values")
    problem = label_key_problem(key)
    if problem:
        errors.append(FieldError(f"{path}.key", problem))
    if values is not None and not (
        isinstance(values, list) and all(isinstance(v, str) for v in values)
    ):
        errors.append(FieldError(f"{path}.values", "must be a list of strings"))
        values = None
    if operator in ("In", "NotIn"):
        if not values:
            errors.append(
                FieldError(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errors.append(
                FieldError(
                    f"{path}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        errors.append(
            FieldError(
                f"{path}.operator",
                f"{operator!r} is not a valid selector operator ({', '.join(OPERATORS)})",
            )
        )
    for j, value in enumerate(values or []):
        problem = label_value_problem(value)
        if problem:
            errors.append(FieldError(f"{path}.values[{j}]", problem))
    if len(errors) > before:
        return None
    return Requirement(str(key), str(operator), frozenset(values or ()))
