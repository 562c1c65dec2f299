"""Three `rightsizer serve` processes share one Lease; the leader is killed -9. From their logs:
one leader at a time, hand-over within the lease duration; from the audit trail: each scale
change made once."""

from __future__ import annotations

import itertools
import json
import re
import signal
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from app.simulator.simulator import Simulator
from tests.support.processes import AppProcess, wait_for
from tests.support.simulators import replicas

pytestmark = pytest.mark.e2e

LEASE, RENEW, RETRY = 3.0, 2.0, 0.5
SETTINGS: dict[str, Any] = {
    "RIGHTSIZER_LEASE_DURATION": LEASE,
    "RIGHTSIZER_LEASE_RENEW_DEADLINE": RENEW,
    "RIGHTSIZER_LEASE_RETRY_PERIOD": RETRY,
    "RIGHTSIZER_UPDATER_INTERVAL": 1,
}
LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*(became leader|stopped leading)")


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)  # on the default scenario: 5 nodes, coredns in kube-system


def terms(app: AppProcess, killed_at: datetime | None) -> list[tuple[datetime, datetime | None]]:
    """(start, end) of each leadership term in the log; a kill ends a term without a line."""
    out: list[tuple[datetime, datetime | None]] = []
    for line in app.log().splitlines():
        m = LINE.match(line)
        if not m:
            continue
        t = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
        if m.group(2) == "became leader":
            out.append((t, None))
        else:
            assert out and out[-1][1] is None, line
            out[-1] = (out[-1][0], t)
    if killed_at is not None and out and out[-1][1] is None:
        out[-1] = (out[-1][0], killed_at)
    return out


def scale_changes(engine: sa.Engine) -> list[tuple[int, int]]:
    """(from, to) of each scale audit event of coredns, oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT details FROM audit_events WHERE action = 'scale' "
                "AND object_ref = 'kube-system/coredns' ORDER BY id"
            )
        ).all()
    details = [json.loads(raw) if isinstance(raw, str) else raw for (raw,) in rows]
    return [(d["from"], d["to"]) for d in details]


def test_three_instances_leader_killed_one_leader_at_a_time_no_duplicate_scale(
    sim: Simulator, tmp_path: Path
) -> None:
    db_url = f"sqlite:///{tmp_path}/rightsizer.db"
    apps: list[AppProcess] = []
    try:
        first = AppProcess(sim.kubeconfig_path, db_url, tmp_path / "a.log", **SETTINGS)
        first.wait_ready()  # migrates the database before the others start
        apps.append(first)
        for name in ("b", "c"):
            apps.append(
                AppProcess(sim.kubeconfig_path, db_url, tmp_path / f"{name}.log", **SETTINGS)
            )
        for a in apps[1:]:
            a.wait_ready()
        engine = sa.create_engine(db_url)
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO scalers (cluster_id, name, target_namespace, target_kind, "
                    "target_name, params, enabled, version, created_at, updated_at) VALUES "
                    "((SELECT min(id) FROM clusters), 'coredns', "
                    "'kube-system', 'Deployment', 'coredns', "
                    '\'{"linear": {"nodesPerReplica": 1}}\', 1, 1, CURRENT_TIMESTAMP, '
                    "CURRENT_TIMESTAMP)"
                )
            )
        # The scaler writes /scale first and its audit event after: wait for both, so the kill
        # below does not fall between them (that would lose the event, not duplicate it).
        wait_for(lambda: replicas(sim, "kube-system", "Deployment", "coredns") == 5, 30, "5")
        wait_for(lambda: [to for _, to in scale_changes(engine)] == [5], 30, "the audit event")
        [leader] = [a for a in apps if terms(a, None)]
        followers = [a for a in apps if a is not leader]

        killed_at = datetime.now()
        leader.stop(signal.SIGKILL)
        for i in range(2):
            sim.add_node(f"extra-{i}", cpu="8", memory="32Gi")
        wait_for(lambda: any(terms(a, None) for a in followers), 30, "a new leader")
        wait_for(lambda: replicas(sim, "kube-system", "Deployment", "coredns") == 7, 30, "7")
        wait_for(lambda: (5, 7) in scale_changes(engine), 30, "the audit event of 5 -> 7")

        all_terms = sorted(
            (start, end, a.log_path.name)
            for a in apps
            for start, end in terms(a, killed_at if a is leader else None)
        )
        assert len(all_terms) == 2, all_terms  # the first leader, then exactly one successor
        (_s0, e0, who0), (s1, e1, who1) = all_terms
        assert who0 == leader.log_path.name and who1 != who0
        assert e0 is not None and s1 >= e0  # never two holders at once
        assert e1 is None  # the successor still leads
        assert (s1 - killed_at).total_seconds() <= LEASE + 2 * RETRY + 1.0

        changes = scale_changes(engine)
        engine.dispose()
        assert len(changes) == len(set(changes)), changes  # no change recorded twice
        assert changes[-1][1] == 7 and sum(1 for c in changes if c[1] == 7) == 1
        for (_, to), (frm, _) in itertools.pairwise(changes):
            assert frm == to, changes  # each change starts where the previous one ended
        for a in followers:
            if not terms(a, None):
                assert "scaled from" not in a.log()
    finally:
        for a in apps:
            a.stop()


def log_times(app: AppProcess, needle: str) -> list[datetime]:
    out = []
    for line in app.log().splitlines():
        if needle in line:
            out.append(datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f"))
    return out


def test_two_instances_leader_partitioned_from_its_lease_stops_before_the_other_starts(
    sim: Simulator, tmp_path: Path
) -> None:
    """Instance A reaches the API server through a forwarder that, from one moment on, drops
    every request to the Lease while letting all others through (it could still scale): A stops
    leading within the renew deadline, B takes over only after that and within the lease duration,
    A does nothing more, and every scale change is made and audited once."""
    from app.simulator.simulator import write_kubeconfig
    from tests.support.proxies import ApiProxy

    db_url = f"sqlite:///{tmp_path}/rightsizer.db"
    proxy = ApiProxy("127.0.0.1", int(sim.url.rsplit(":", 1)[1]))
    kubeconfig = tmp_path / "via-proxy.kubeconfig"
    write_kubeconfig(kubeconfig, proxy.url)
    a = b = None
    try:
        a = AppProcess(str(kubeconfig), db_url, tmp_path / "a.log", **SETTINGS)
        a.wait_ready()
        wait_for(lambda: terms(a, None), 30, "A leading")
        b = AppProcess(sim.kubeconfig_path, db_url, tmp_path / "b.log", **SETTINGS)
        b.wait_ready()
        engine = sa.create_engine(db_url)
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO scalers (cluster_id, name, target_namespace, target_kind, "
                    "target_name, params, enabled, version, created_at, updated_at) VALUES "
                    "((SELECT min(id) FROM clusters), 'coredns', "
                    "'kube-system', 'Deployment', 'coredns', "
                    '\'{"linear": {"nodesPerReplica": 1}}\', 1, 1, CURRENT_TIMESTAMP, '
                    "CURRENT_TIMESTAMP)"
                )
            )
        wait_for(lambda: replicas(sim, "kube-system", "Deployment", "coredns") == 5, 30, "5")
        wait_for(lambda: [to for _, to in scale_changes(engine)] == [5], 30, "the audit event")
        assert not terms(b, None) and log_times(a, "scaled from")

        partitioned_at = datetime.now()
        proxy.block = lambda method, path: "/leases" in path
        for i in range(2):
            sim.add_node(f"extra-{i}", cpu="8", memory="32Gi")
        wait_for(lambda: terms(b, None), 30, "B leading")
        wait_for(lambda: replicas(sim, "kube-system", "Deployment", "coredns") == 7, 30, "7")
        wait_for(lambda: (5, 7) in scale_changes(engine), 30, "the audit event of 5 -> 7")
        assert proxy.blocked  # A did try to renew, and failed

        [(_, a_end)] = terms(a, None)
        [(b_start, b_end)] = terms(b, None)
        assert a_end is not None and b_end is None
        assert "could not renew" in a.log()
        assert a_end < b_start  # A had stopped before B started: never two leaders at once
        assert (a_end - partitioned_at).total_seconds() <= RENEW + 2 * RETRY + 1.0
        assert (b_start - partitioned_at).total_seconds() <= LEASE + 2 * RETRY + 1.0
        # A kept its API access (only the Lease was cut) but made no change after it stepped down.
        assert all(t < a_end for t in log_times(a, "scaled from"))

        # The partition heals: A stays a follower, and the next change is B's alone.
        proxy.block = lambda method, path: False
        sim.add_node("extra-2", cpu="8", memory="32Gi")
        wait_for(lambda: (7, 8) in scale_changes(engine), 30, "the audit event of 7 -> 8")
        assert len(terms(a, None)) == 1 and len(terms(b, None)) == 1
        assert all(t < a_end for t in log_times(a, "scaled from"))
        changes = scale_changes(engine)
        engine.dispose()
        assert len(changes) == len(set(changes)), changes
        assert [to for _, to in changes][-2:] == [7, 8] and changes.count((5, 7)) == 1
        for (_, to), (frm, _) in itertools.pairwise(changes):
            assert frm == to, changes
    finally:
        for p in (a, b):
            if p is not None:
                p.stop()
        proxy.close()
