"""Workloads' daily profiles, stored so that a new leader resumes them

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07 05:40:00.000000

The leader keeps each workload's usage per 15-minute slot of the day for the nodes' levels ahead
(app.core.placement.profile) and stores them every hour, one row per workload (1,920 bytes of
arrays); a new leader loads them at its first run instead of learning a whole day anew.
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "workload_profiles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cluster_id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.String(length=63), nullable=False),
        sa.Column("kind", sa.String(length=317), nullable=False),
        sa.Column("name", sa.String(length=253), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"], ["clusters.id"], name=op.f("fk_workload_profiles_cluster_id_clusters")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workload_profiles")),
        sa.UniqueConstraint(
            "cluster_id",
            "namespace",
            "kind",
            "name",
            name=op.f("uq_workload_profiles_cluster_id_namespace_kind_name"),
        ),
    )


def downgrade():
    op.drop_table("workload_profiles")
