"""A client of the Prometheus HTTP API (`/api/v1/query_range`), as production servers want it: a
bearer token (from a file, read at each query so a rotated token is used) or basic auth, TLS with
a CA of its own, a client certificate or no verification, extra headers (a tenant), and errors that
say what is wrong. The same API is served by Thanos Query, VictoriaMetrics (vmselect's
`/select/<tenant>/prometheus`), Grafana Mimir and Cortex (`/prometheus`, tenant in
`X-Scope-OrgID`): RIGHTSIZER_PROMETHEUS_URL is the base the `/api/v1/...` paths go below.

Re-derived from VPA's prometheus history provider (kubernetes/autoscaler `vertical-pod-autoscaler/
pkg/recommender/input/history/history_provider.go`, `config/config.go`): its bearer token and
basic auth round trippers (a bearer token wins; the three are exclusive), `--prometheus-insecure`,
`--prometheus-query-timeout`, and the queries below: the cAdvisor series selected by
`--prometheus-cadvisor-job-name` (none when empty), `--container-pod-name-label` matching a
pod, `--container-name-label` neither empty nor `POD`; CPU as `rate(<--history-cpu-metric>{...}
[<resolution>])`, memory as `<--history-memory-metric>{...}`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from app.settings import PrometheusSettings

CONNECT_TIMEOUT = 10.0


class HistoryError(RuntimeError):
    """Prometheus could not give the history; `retry` when waiting may help (it is down)."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


def cadvisor_selector(s: PrometheusSettings) -> str:
    """The label matchers of the containers' series (VPA's GetClusterHistory podSelector)."""
    parts = [f'job="{s.cadvisor_job_name}"'] if s.cadvisor_job_name else []
    parts += [
        f'{s.pod_label}=~".+"',
        f'{s.container_label}!="POD"',
        f'{s.container_label}!=""',
    ]
    return ", ".join(parts)


def cpu_query(s: PrometheusSettings) -> str:
    """CPU cores used, averaged over the resolution (the step), as VPA queries it."""
    return f"rate({s.cpu_metric}{{{cadvisor_selector(s)}}}[{int(s.step)}s])"


def memory_query(s: PrometheusSettings) -> str:
    return f"{s.memory_metric}{{{cadvisor_selector(s)}}}"


class PrometheusClient:
    def __init__(self, settings: PrometheusSettings) -> None:
        self.s = settings
        self.base = settings.url.rstrip("/")
        self.session = requests.Session()
        # Retries of one request on a gateway error (a restarting Prometheus behind its proxy);
        # longer outages are history.py's back-off.
        retry = Retry(
            total=2,
            connect=0,  # refused, TLS: said at once (the back-off is the caller's)
            read=0,
            other=0,
            backoff_factor=0.5,
            status_forcelist=(502, 503, 504),
            allowed_methods=("GET",),
            raise_on_status=False,  # the last 5xx answer is read and reported
        )
        self.session.mount("http://", HTTPAdapter(max_retries=retry))
        self.session.mount("https://", HTTPAdapter(max_retries=retry))

    # --- one request --------------------------------------------------------------------------

    def _credentials(self) -> tuple[dict[str, str], tuple[str, str] | None]:
        """(headers, basic auth): read now, so a token file rotated meanwhile is used."""
        s = self.s
        headers = dict(s.headers)
        token = s.bearer_token or _read(
            s.bearer_token_file, "RIGHTSIZER_PROMETHEUS_BEARER_TOKEN_FILE"
        )
        if token:
            headers["Authorization"] = f"Bearer {token}"
            return headers, None
        if s.username:
            password = s.password or _read(s.password_file, "RIGHTSIZER_PROMETHEUS_PASSWORD_FILE")
            return headers, (s.username, password)
        return headers, None

    def get(self, path: str, params: dict[str, str]) -> Any:
        """The `data` of a successful answer; HistoryError saying what went wrong otherwise."""
        s = self.s
        url = f"{self.base}{path}"
        headers, auth = self._credentials()
        try:
            resp = self.session.get(
                url,
                params=params,
                headers=headers,
                auth=auth,
                verify=False if s.insecure else (s.ca_file or True),
                cert=(s.client_cert_file, s.client_key_file) if s.client_cert_file else None,
                timeout=(CONNECT_TIMEOUT, s.query_timeout_seconds + CONNECT_TIMEOUT),
            )
        except requests.exceptions.SSLError as e:
            raise HistoryError(
                f"TLS with {self.base} failed ({_reason(e)}): trust its CA with "
                "RIGHTSIZER_PROMETHEUS_CA_FILE, give a client certificate with "
                "RIGHTSIZER_PROMETHEUS_CLIENT_CERT_FILE and _KEY_FILE if it asks for one, or "
                "skip verification with RIGHTSIZER_PROMETHEUS_INSECURE=true"
            ) from None
        except requests.exceptions.Timeout:
            raise HistoryError(
                f"Prometheus at {self.base} did not answer within "
                f"{s.query_timeout_seconds:g}s (RIGHTSIZER_PROMETHEUS_QUERY_TIMEOUT_SECONDS)",
                retry=True,
            ) from None
        except requests.exceptions.RequestException as e:
            raise HistoryError(
                f"Prometheus at {self.base} is unreachable ({_reason(e)})", retry=True
            ) from None
        return self._data(resp)

    def _data(self, resp: requests.Response) -> Any:
        if resp.status_code in (401, 403):
            raise HistoryError(
                f"Prometheus at {self.base} answered {resp.status_code} {resp.reason}: "
                f"{self._auth_hint()}"
            )
        try:
            body = resp.json()
        except ValueError:
            media = resp.headers.get("content-type", "no content type")
            raise HistoryError(
                f"{self.base} answered {resp.status_code} with {media}, not the Prometheus HTTP "
                "API: RIGHTSIZER_PROMETHEUS_URL is the base /api/v1 goes below (e.g. "
                "http://prometheus:9090, http://vmselect:8481/select/0/prometheus, "
                "http://mimir:8080/prometheus)",
                retry=resp.status_code >= 500,
            ) from None
        if not isinstance(body, dict) or body.get("status") != "success":
            error = body.get("error") if isinstance(body, dict) else None
            error_type = body.get("errorType") if isinstance(body, dict) else None
            raise HistoryError(
                f"Prometheus at {self.base} answered {resp.status_code}"
                f"{f' ({error_type})' if error_type else ''}: {error or json.dumps(body)[:200]}",
                retry=resp.status_code >= 500,
            )
        return body.get("data") or {}

    def _auth_hint(self) -> str:
        s = self.s
        if s.bearer_token or s.bearer_token_file:
            return "the bearer token was refused (RIGHTSIZER_PROMETHEUS_BEARER_TOKEN[_FILE])"
        if s.username:
            return "the user and password were refused (RIGHTSIZER_PROMETHEUS_USERNAME/PASSWORD)"
        return (
            "it wants credentials: set RIGHTSIZER_PROMETHEUS_BEARER_TOKEN_FILE, "
            "RIGHTSIZER_PROMETHEUS_BEARER_TOKEN or RIGHTSIZER_PROMETHEUS_USERNAME and _PASSWORD"
        )

    def query_range(self, query: str, start: float, end: float) -> list[dict[str, Any]]:
        """The series of a range query (a matrix), at the settings' step."""
        data = self.get(
            "/api/v1/query_range",
            {
                "query": query,
                "start": f"{start:.3f}",
                "end": f"{end:.3f}",
                "step": f"{self.s.step:g}",
                "timeout": f"{self.s.query_timeout_seconds:g}s",
            },
        )
        if not isinstance(data, dict) or data.get("resultType") != "matrix":
            got = data.get("resultType") if isinstance(data, dict) else data
            raise HistoryError(f"expected a matrix for {query!r}, got {got!r}")
        return list(data.get("result") or [])


def _read(path: str, variable: str) -> str:
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError as e:
        raise HistoryError(f"cannot read {variable} {path}: {e.strerror or e}") from None


def _reason(e: Exception) -> str:
    """The innermost reason of a requests error, without urllib3's pool details."""
    text = str(e.args[0] if e.args else e)
    ssl_reason = re.search(r"\[SSL: [A-Z_]+\] ([^(]+?)(?: \(_ssl|'|$)", text)
    if ssl_reason:
        return ssl_reason.group(1).strip()
    errno_reason = re.search(r"\[Errno -?\d+\] ([^'\")]+)", text)
    if errno_reason:
        return errno_reason.group(1).strip()
    return text.split("(Caused by ", 1)[-1].rstrip(")")[:300]
