"""Database tables. Amounts: CPU in millicores, memory in bytes (BigInteger: bounds reach int64)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.store.extensions import db

# A workload's kind: one of the six known by name, or `Kind.group` of any scalable kind
# (`Rollout.argoproj.io`): a kind (at most 63 characters), a dot and its API group (253).
KIND_LENGTH = 317


# A label key: an optional DNS-subdomain prefix (253), a slash, a name (63).
LABEL_KEY_LENGTH = 317


def utcnow() -> datetime:
    return datetime.now(UTC)


class Timestamps:
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )


class Cluster(db.Model):  # type: ignore[name-defined]
    """One cluster of the fleet: every per-cluster row refers to it (docs/database.md). `uid` is
    the identity its rightsizer declares (RIGHTSIZER_CLUSTER_ID, by default the kube-system
    namespace's uid); None until the first rightsizer to start claims the row (migration 0013
    moves a single-cluster database's rows into one such row)."""

    __tablename__ = "clusters"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uid: Mapped[str | None] = mapped_column(String(253), unique=True)
    name: Mapped[str] = mapped_column(String(253))
    # RIGHTSIZER_CLUSTER_LABELS: what policies select clusters by (migration 0016)
    labels: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


def cluster_column() -> Mapped[int]:
    """The cluster a row belongs to (app.store.clusters)."""
    return mapped_column(Integer, ForeignKey("clusters.id"))


class ClusterTotals(db.Model):  # type: ignore[name-defined]
    """A cluster's figures for the fleet view (app.store.cluster_totals), written by its leader
    after a recommender run, at most every 5 minutes: one row per cluster (migration 0017).
    Millicores and bytes."""

    __tablename__ = "cluster_totals"

    cluster_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("clusters.id"), primary_key=True, autoincrement=False
    )
    workloads: Mapped[int] = mapped_column(Integer)
    containers: Mapped[int] = mapped_column(Integer)
    seen_workloads: Mapped[int] = mapped_column(Integer)
    pods: Mapped[int] = mapped_column(BigInteger)
    requested_cpu: Mapped[int] = mapped_column(BigInteger)
    requested_memory: Mapped[int] = mapped_column(BigInteger)
    recommended_cpu: Mapped[int] = mapped_column(BigInteger)
    recommended_memory: Mapped[int] = mapped_column(BigInteger)
    savings_cpu: Mapped[int] = mapped_column(BigInteger)
    savings_memory: Mapped[int] = mapped_column(BigInteger)
    shortfall_cpu: Mapped[int] = mapped_column(BigInteger)
    shortfall_memory: Mapped[int] = mapped_column(BigInteger)
    short_containers: Mapped[int] = mapped_column(Integer)
    # the newest recommendation row summed (None: no row)
    last_update: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # when the rows were read and summed (the recommender run's time)
    as_of: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Policy(Timestamps, db.Model):  # type: ignore[name-defined]
    """The database twin of a VerticalPodAutoscaler object (fields in docs/policies.md)."""

    __tablename__ = "policies"
    __table_args__ = (UniqueConstraint("namespace", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # The cluster it governs; None: every cluster of the fleet. Its name stays unique in the
    # fleet (namespace, name), so the API keeps finding it by those. Indexed: each cluster's
    # reads (the webhook's snapshot, every few seconds) find its own without the fleet's (0014).
    cluster_id: Mapped[int | None] = mapped_column(Integer, ForeignKey("clusters.id"), index=True)
    # The clusters it targets as written (app.documents.cluster_target), cluster_id then None;
    # None: its one cluster (cluster_id), or every cluster when cluster_id is None too (0016).
    clusters: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    name: Mapped[str] = mapped_column(String(253))
    namespace: Mapped[str] = mapped_column(String(63), index=True)  # "*" = cluster default
    target_kind: Mapped[str | None] = mapped_column(String(KIND_LENGTH))
    target_name: Mapped[str | None] = mapped_column(String(253))
    # target.apiVersion and target.selector as written (app.documents.target); None: neither.
    target_options: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    update_mode: Mapped[str] = mapped_column(String(32), default="Off")
    min_replicas: Mapped[int | None] = mapped_column(Integer)
    container_policies: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # evictionRequirements, evictAfterOOMSeconds, inPlaceSkipDisruptionBudget, startupBoost as
    # written (app.documents.update_fields); None when the policy sets none of them.
    update_options: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # recommender and recommenderParams as written (app.documents.recommender_fields); None: vpa.
    recommender: Mapped[str | None] = mapped_column(String(64))
    recommender_params: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # nodeGroupLabel as written (app.documents.node_group_fields); None: sized as a whole.
    node_group_label: Mapped[str | None] = mapped_column(String(LABEL_KEY_LENGTH))
    # placement as written (app.documents.placement_fields); None: `default`.
    placement: Mapped[str | None] = mapped_column(String(32))
    version: Mapped[int] = mapped_column(Integer, default=1)


class Recommendation(db.Model):  # type: ignore[name-defined]
    __tablename__ = "recommendations"
    __table_args__ = (UniqueConstraint("cluster_id", "namespace", "kind", "name", "container"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    namespace: Mapped[str] = mapped_column(String(63))
    kind: Mapped[str] = mapped_column(String(KIND_LENGTH))
    name: Mapped[str] = mapped_column(String(253))
    container: Mapped[str] = mapped_column(String(253))
    target_cpu: Mapped[int] = mapped_column(BigInteger)
    target_memory: Mapped[int] = mapped_column(BigInteger)
    lower_bound_cpu: Mapped[int] = mapped_column(BigInteger)
    lower_bound_memory: Mapped[int] = mapped_column(BigInteger)
    upper_bound_cpu: Mapped[int] = mapped_column(BigInteger)
    upper_bound_memory: Mapped[int] = mapped_column(BigInteger)
    uncapped_target_cpu: Mapped[int] = mapped_column(BigInteger)
    uncapped_target_memory: Mapped[int] = mapped_column(BigInteger)
    sample_count: Mapped[int] = mapped_column(Integer, default=0)
    first_sample_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_sample_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # What a pod of the workload requests now (from the last run that saw one; the most common
    # request when pods differ), for differences.
    current_cpu_request: Mapped[int | None] = mapped_column(BigInteger)
    current_memory_request: Mapped[int | None] = mapped_column(BigInteger)
    # Live pods running the container in that run (each reporting metrics), and the sum of
    # their requests: savings over the real pods (app.core.savings).
    replicas: Mapped[int | None] = mapped_column(Integer)
    requested_cpu_total: Mapped[int | None] = mapped_column(BigInteger)
    requested_memory_total: Mapped[int | None] = mapped_column(BigInteger)
    # Resources another controller owns, e.g. {"cpu": "HorizontalPodAutoscaler web scales it
    # on cpu"}: the recommendation is shown, but the webhook and the updater leave them alone.
    conflicts: Mapped[dict[str, str] | None] = mapped_column(JSON, default=dict)
    # How the strategy reached the target (app.core.recommend.strategies), e.g. "vpa: CPU p90 ...".
    reason: Mapped[str | None] = mapped_column(Text)


class RecommendationPoint(db.Model):  # type: ignore[name-defined]
    """The target of one workload container at one time: at most one point an hour, 8 days."""

    __tablename__ = "recommendation_history"
    __table_args__ = (  # the cluster, the key of app.store.keys, then time (0010, 0013)
        Index(
            "ix_recommendation_history_key",
            "cluster_id",
            "namespace",
            "kind",
            "name",
            "container",
            "time",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    namespace: Mapped[str] = mapped_column(String(63))
    kind: Mapped[str] = mapped_column(String(KIND_LENGTH))
    name: Mapped[str] = mapped_column(String(253))
    container: Mapped[str] = mapped_column(String(253))
    time: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    target_cpu: Mapped[int] = mapped_column(BigInteger)
    target_memory: Mapped[int] = mapped_column(BigInteger)
    current_cpu_request: Mapped[int | None] = mapped_column(BigInteger)
    current_memory_request: Mapped[int | None] = mapped_column(BigInteger)
    # Percentiles of the usage samples since the previous point (app.core.recommend.timeline):
    # millicores and bytes, None without samples.
    usage_cpu_p50: Mapped[int | None] = mapped_column(BigInteger)
    usage_cpu_p90: Mapped[int | None] = mapped_column(BigInteger)
    usage_memory_p50: Mapped[int | None] = mapped_column(BigInteger)
    usage_memory_p90: Mapped[int | None] = mapped_column(BigInteger)


class WorkloadCondition(db.Model):  # type: ignore[name-defined]
    """One condition of a workload's recommendation, as VPA reports them in status.conditions
    (and rightsizer's own types): written by the recommender and the updater, each for its types
    (app.core.conditions), read by the API, the CLI and the dashboard."""

    __tablename__ = "workload_conditions"
    __table_args__ = (UniqueConstraint("cluster_id", "namespace", "kind", "name", "type"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    namespace: Mapped[str] = mapped_column(String(63))
    kind: Mapped[str] = mapped_column(String(KIND_LENGTH))
    name: Mapped[str] = mapped_column(String(253))
    type: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))  # True, False or Unknown
    reason: Mapped[str] = mapped_column(String(128), default="")
    message: Mapped[str] = mapped_column(Text, default="")
    last_transition_time: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Checkpoint(db.Model):  # type: ignore[name-defined]
    """Histograms of one workload container, enough to resume after a restart (VPA checkpoint)."""

    __tablename__ = "checkpoints"
    __table_args__ = (UniqueConstraint("cluster_id", "namespace", "kind", "name", "container"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    namespace: Mapped[str] = mapped_column(String(63))
    kind: Mapped[str] = mapped_column(String(KIND_LENGTH))
    name: Mapped[str] = mapped_column(String(253))
    container: Mapped[str] = mapped_column(String(253))
    cpu_buckets: Mapped[dict[str, int]] = mapped_column(JSON)
    cpu_total_weight: Mapped[float] = mapped_column(Float)
    cpu_reference_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    memory_buckets: Mapped[dict[str, int]] = mapped_column(JSON)
    memory_total_weight: Mapped[float] = mapped_column(Float)
    memory_reference_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    sample_count: Mapped[int] = mapped_column(Integer, default=0)
    first_sample_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_sample_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    version: Mapped[str] = mapped_column(String(16))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Usage per UTC day for the window strategies (app.core.recommend.daily); None: none saved.
    daily: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)


class NodeGroupRecommendation(db.Model):  # type: ignore[name-defined]
    """A DaemonSet container's recommendation in one node group (the value of its policy's
    `nodeGroupLabel` on the pods' nodes, app.core.node_groups), with the histograms it rests on:
    written by the recommender each run, read by the webhook, the updater, the API and the
    dashboard. The DaemonSet-wide recommendation stays in `recommendations`."""

    __tablename__ = "node_group_recommendations"
    __table_args__ = (
        UniqueConstraint("cluster_id", "namespace", "kind", "name", "container", "node_group"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    namespace: Mapped[str] = mapped_column(String(63))
    kind: Mapped[str] = mapped_column(String(KIND_LENGTH))
    name: Mapped[str] = mapped_column(String(253))
    container: Mapped[str] = mapped_column(String(253))
    node_label: Mapped[str] = mapped_column(String(LABEL_KEY_LENGTH))
    node_group: Mapped[str] = mapped_column(String(63))  # the label's value, or "<none>"
    # None until the strategy has enough of the group's samples
    target_cpu: Mapped[int | None] = mapped_column(BigInteger)
    target_memory: Mapped[int | None] = mapped_column(BigInteger)
    lower_bound_cpu: Mapped[int | None] = mapped_column(BigInteger)
    lower_bound_memory: Mapped[int | None] = mapped_column(BigInteger)
    upper_bound_cpu: Mapped[int | None] = mapped_column(BigInteger)
    upper_bound_memory: Mapped[int | None] = mapped_column(BigInteger)
    uncapped_target_cpu: Mapped[int | None] = mapped_column(BigInteger)
    uncapped_target_memory: Mapped[int | None] = mapped_column(BigInteger)
    reason: Mapped[str | None] = mapped_column(Text)
    # live pods of the group in the last run that saw one, and a pod's requests then
    pods: Mapped[int | None] = mapped_column(Integer)
    current_cpu_request: Mapped[int | None] = mapped_column(BigInteger)
    current_memory_request: Mapped[int | None] = mapped_column(BigInteger)
    sample_count: Mapped[int] = mapped_column(Integer, default=0)
    first_sample_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_sample_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # the group's histograms and daily usage (app.store.node_groups: as a checkpoint row holds)
    checkpoint: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Scaler(Timestamps, db.Model):  # type: ignore[name-defined]
    """The database twin of a cluster-proportional-autoscaler deployment."""

    __tablename__ = "scalers"
    __table_args__ = (UniqueConstraint("cluster_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    name: Mapped[str] = mapped_column(String(253))
    target_namespace: Mapped[str] = mapped_column(String(63))
    target_kind: Mapped[str] = mapped_column(String(32))
    target_name: Mapped[str] = mapped_column(String(253))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    node_selector: Mapped[str | None] = mapped_column(String(1024))
    # Taints ("key", "key=value" or "key=value:Effect") whose nodes are not counted.
    skip_taints: Mapped[list[str] | None] = mapped_column(JSON)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    # HPA-style behavior (None: act at once, like cluster-proportional-autoscaler).
    behavior: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Recent proposals and scale changes, so a restart or a new leader keeps the windows.
    history: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # What the last run decided, for the API and dashboard.
    last_proposed: Mapped[int | None] = mapped_column(Integer)
    last_applied: Mapped[int | None] = mapped_column(Integer)
    last_run_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_message: Mapped[str | None] = mapped_column(Text)


class NodeSpreadRow(db.Model):  # type: ignore[name-defined]
    """The cluster's spread of node levels at one time (app.core.placement.spread): a point every
    few minutes for a week, kept by the leader (app.store.node_spread)."""

    __tablename__ = "node_spread"
    __table_args__ = (Index("ix_node_spread_cluster_at", "cluster_id", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    nodes: Mapped[int] = mapped_column(Integer)
    cpu_spread: Mapped[float] = mapped_column(Float)  # fractions of allocatable
    cpu_deviation: Mapped[float] = mapped_column(Float)
    memory_spread: Mapped[float] = mapped_column(Float)
    memory_deviation: Mapped[float] = mapped_column(Float)
    cpu_hottest: Mapped[float] = mapped_column(Float)


class AuditEvent(db.Model):  # type: ignore[name-defined]
    """What rightsizer did or was told to do: policy edits, evictions, resizes, scaling."""

    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_events_cluster_time", "cluster_id", "time"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    time: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(253))
    action: Mapped[str] = mapped_column(String(64))
    object_kind: Mapped[str] = mapped_column(String(64))
    object_ref: Mapped[str] = mapped_column(String(600))
    message: Mapped[str] = mapped_column(Text, default="")
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class NodeLevelRow(db.Model):  # type: ignore[name-defined]
    """A node's usage level per window (app.core.placement.windows), kept by the leader from
    NodeMetrics and read by every process that serves the scheduler extender: one row per node,
    deleted a day after the node's last metrics (app.store.node_levels)."""

    __tablename__ = "node_levels"
    __table_args__ = (UniqueConstraint("cluster_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    name: Mapped[str] = mapped_column(String(253))
    cpu_allocatable: Mapped[int] = mapped_column(BigInteger)  # millicores
    memory_allocatable: Mapped[int] = mapped_column(BigInteger)  # bytes
    # used / allocatable, per window
    cpu_15m: Mapped[float] = mapped_column(Float)
    cpu_1h: Mapped[float] = mapped_column(Float)
    cpu_1d: Mapped[float] = mapped_column(Float)
    memory_15m: Mapped[float] = mapped_column(Float)
    memory_1h: Mapped[float] = mapped_column(Float)
    memory_1d: Mapped[float] = mapped_column(Float)
    # the newest sample's level: no window reads below it (app.core.placement.windows)
    cpu_now: Mapped[float | None] = mapped_column(Float)
    memory_now: Mapped[float | None] = mapped_column(Float)
    metrics_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # the levels in each of the next hours from the pods' daily profiles, a JSON list of
    # fractions each (app.core.placement.profile); NULL: none known
    cpu_ahead: Mapped[str | None] = mapped_column(Text)
    memory_ahead: Mapped[str | None] = mapped_column(Text)


class WorkloadProfileRow(db.Model):  # type: ignore[name-defined]
    """A workload's daily usage profile (app.core.placement.profile): its usage per pod in each
    15-minute slot of the day, kept by the leader for the nodes' levels ahead and stored every
    hour so that a new leader resumes them (app.store.profiles, migration 0019)."""

    __tablename__ = "workload_profiles"
    __table_args__ = (UniqueConstraint("cluster_id", "namespace", "kind", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = cluster_column()
    namespace: Mapped[str] = mapped_column(String(63))
    kind: Mapped[str] = mapped_column(String(KIND_LENGTH))
    name: Mapped[str] = mapped_column(String(253))
    data: Mapped[bytes] = mapped_column(LargeBinary)  # Profiles.encoded: 1,920 bytes
    saved_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
