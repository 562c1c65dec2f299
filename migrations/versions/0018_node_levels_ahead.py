"""Node levels ahead: each node's level over the next hours from its pods' daily profiles

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07 05:30:00.000000

The leader keeps each workload's usage per 15-minute slot of the day and, from the profiles of
the pods each node runs, the node's CPU and memory levels in each of the next hours
(app.core.placement.profile); the scheduler extender scores them beside the windows. Two
nullable JSON-list columns: a row without them (every row written before) has none known.
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("node_levels") as batch:
        batch.add_column(sa.Column("cpu_ahead", sa.Text(), nullable=True))
        batch.add_column(sa.Column("memory_ahead", sa.Text(), nullable=True))


def downgrade():
    with op.batch_alter_table("node_levels") as batch:
        batch.drop_column("memory_ahead")
        batch.drop_column("cpu_ahead")
