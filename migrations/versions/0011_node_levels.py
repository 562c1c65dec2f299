"""Node levels for water-level placement: one row per node, its usage per window

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06 15:00:00.000000

The leader folds each NodeMetrics sample into every node's levels (used / allocatable, as
exponentially weighted means over 15 minutes, an hour and a day: app.core.placement.windows);
every process serving the scheduler extender reloads them. One row per node; a node without
metrics for a day loses its row, so the table stays the size of the cluster.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "node_levels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=253), nullable=False),
        sa.Column("cpu_allocatable", sa.BigInteger(), nullable=False),
        sa.Column("memory_allocatable", sa.BigInteger(), nullable=False),
        sa.Column("cpu_15m", sa.Float(), nullable=False),
        sa.Column("cpu_1h", sa.Float(), nullable=False),
        sa.Column("cpu_1d", sa.Float(), nullable=False),
        sa.Column("memory_15m", sa.Float(), nullable=False),
        sa.Column("memory_1h", sa.Float(), nullable=False),
        sa.Column("memory_1d", sa.Float(), nullable=False),
        sa.Column("cpu_now", sa.Float(), nullable=True),
        sa.Column("memory_now", sa.Float(), nullable=True),
        sa.Column("metrics_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )


def downgrade():
    op.drop_table("node_levels")
