"""DaemonSets sized per node group: the policy's nodeGroupLabel, a recommendation per group

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05 10:00:00.000000

Policies may name a node label (`node_group_label`, the document's `nodeGroupLabel`); the
recommender then keeps, for each DaemonSet they govern, one recommendation per container and node
group (the label's value on the pods' nodes, `<none>` without it) in `node_group_recommendations`,
beside the DaemonSet-wide one, with the group's histograms as a checkpoint.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.add_column(sa.Column("node_group_label", sa.String(length=317), nullable=True))
    op.create_table(
        "node_group_recommendations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.String(length=63), nullable=False),
        sa.Column("kind", sa.String(length=317), nullable=False),
        sa.Column("name", sa.String(length=253), nullable=False),
        sa.Column("container", sa.String(length=253), nullable=False),
        sa.Column("node_label", sa.String(length=317), nullable=False),
        sa.Column("node_group", sa.String(length=63), nullable=False),
        sa.Column("target_cpu", sa.BigInteger(), nullable=True),
        sa.Column("target_memory", sa.BigInteger(), nullable=True),
        sa.Column("lower_bound_cpu", sa.BigInteger(), nullable=True),
        sa.Column("lower_bound_memory", sa.BigInteger(), nullable=True),
        sa.Column("upper_bound_cpu", sa.BigInteger(), nullable=True),
        sa.Column("upper_bound_memory", sa.BigInteger(), nullable=True),
        sa.Column("uncapped_target_cpu", sa.BigInteger(), nullable=True),
        sa.Column("uncapped_target_memory", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("pods", sa.Integer(), nullable=True),
        sa.Column("current_cpu_request", sa.BigInteger(), nullable=True),
        sa.Column("current_memory_request", sa.BigInteger(), nullable=True),
        sa.Column("sample_count", sa.Integer(), nullable=False),
        sa.Column("first_sample_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_sample_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("checkpoint", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("namespace", "kind", "name", "container", "node_group"),
    )


def downgrade():
    op.drop_table("node_group_recommendations")
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.drop_column("node_group_label")
