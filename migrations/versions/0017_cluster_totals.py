"""Each cluster's totals for the fleet view, written by its leader at most every 5 minutes

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07 05:00:00.000000

`cluster_totals` holds one row per cluster: the figures GET /api/v1/fleet shows for it
(workloads, containers, pods, requested, recommended, savings, shortfall; millicores and bytes),
the newest recommendation row summed and `as_of`, when they were summed (app.store.cluster_totals).
The upgrade leaves it empty: until a cluster's leader writes its row, the fleet view sums that
cluster's rows at the request, as before. The downgrade drops it: the totals are derived from the
recommendation rows, which stay, so nothing is lost.
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

COUNTS = ("workloads", "containers", "seen_workloads", "short_containers")
AMOUNTS = (
    "pods",
    "requested_cpu",
    "requested_memory",
    "recommended_cpu",
    "recommended_memory",
    "savings_cpu",
    "savings_memory",
    "shortfall_cpu",
    "shortfall_memory",
)


def upgrade():
    op.create_table(
        "cluster_totals",
        sa.Column("cluster_id", sa.Integer(), autoincrement=False, nullable=False),
        *(sa.Column(c, sa.Integer(), nullable=False) for c in COUNTS),
        *(sa.Column(c, sa.BigInteger(), nullable=False) for c in AMOUNTS),
        sa.Column("last_update", sa.DateTime(timezone=True), nullable=True),
        sa.Column("as_of", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"], ["clusters.id"], name=op.f("fk_cluster_totals_cluster_id_clusters")
        ),
        sa.PrimaryKeyConstraint("cluster_id", name=op.f("pk_cluster_totals")),
    )


def downgrade():
    op.drop_table("cluster_totals")
