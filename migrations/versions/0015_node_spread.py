"""The cluster's spread of node levels over time: a point every few minutes for a week

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06 18:30:00.000000

The leader records how far apart the nodes' levels are (max - min and standard deviation, CPU and
memory, and the hottest node's CPU) at most every 5 minutes and deletes points older than 7 days:
at most 2,016 rows per cluster (app.store.node_spread). The Nodes page charts them.
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "node_spread",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cluster_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("nodes", sa.Integer(), nullable=False),
        sa.Column("cpu_spread", sa.Float(), nullable=False),
        sa.Column("cpu_deviation", sa.Float(), nullable=False),
        sa.Column("memory_spread", sa.Float(), nullable=False),
        sa.Column("memory_deviation", sa.Float(), nullable=False),
        sa.Column("cpu_hottest", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"], ["clusters.id"], name=op.f("fk_node_spread_cluster_id_clusters")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_node_spread")),
    )
    op.create_index("ix_node_spread_cluster_at", "node_spread", ["cluster_id", "at"], unique=False)


def downgrade():
    op.drop_index("ix_node_spread_cluster_at", table_name="node_spread")
    op.drop_table("node_spread")
