"""The rows of a DaemonSet sized per node group (<namespace>/DaemonSet/agent, container agent), as
the recommender stores them, for the REST API's, the dashboard's and the webhook's tests."""

from __future__ import annotations

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.checkpoint import save_aggregate
from app.core.recommend.settings import RecommenderSettings
from app.store.extensions import db
from app.store.models import NodeGroupRecommendation
from app.store.node_groups import checkpoint_json
from tests.support.reviews import MI

TYPE = "node.kubernetes.io/instance-type"


def add_group(
    group: str, cpu: int | None, memory: int, pods: int | None = None, *, namespace: str = "ops"
) -> None:
    """One group's row: with `cpu`, a recommendation of cpu millicores and memory bytes (target
    and every bound), 12 samples and a reason; without, too few samples for one (1, no reason).
    With `pods`, the pods seen asked for 100m and 256Mi each; without, no requests are known."""
    amounts: dict[str, int] = {}
    if cpu is not None:
        for prefix in ("target", "lower_bound", "upper_bound", "uncapped_target"):
            amounts[f"{prefix}_cpu"], amounts[f"{prefix}_memory"] = cpu, memory
    db.session.add(
        NodeGroupRecommendation(
            namespace=namespace,
            kind="DaemonSet",
            name="agent",
            container="agent",
            node_label=TYPE,
            node_group=group,
            pods=pods,
            current_cpu_request=100 if pods else None,
            current_memory_request=256 * MI if pods else None,
            sample_count=12 if cpu else 1,
            checkpoint=checkpoint_json(save_aggregate(AggregateState.empty(RecommenderSettings()))),
            reason="vpa: ..." if cpu else None,
            **amounts,
        )
    )
    db.session.commit()
