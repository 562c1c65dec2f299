"""A fleet's clusters carry labels, and a policy may target clusters by name or label

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06 18:40:00.000000

`clusters.labels` (JSON, {} for the clusters already there) holds what RIGHTSIZER_CLUSTER_LABELS
declares; `policies.clusters` (JSON, NULL for the policies already there: they keep their one
cluster, or all) holds a policy's target as written (`{"names": [...]}` or `{"selector":
{"matchLabels": {...}}}`, app.documents.cluster_target), with `cluster_id` NULL. A downgrade
keeps a targeted policy only when it targets every cluster (`selector: {}`, then fleet-wide in
0013's shape): one targeting a set cannot be told apart there and is deleted rather than let
loose on every cluster.
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("clusters") as b:
        b.add_column(sa.Column("labels", sa.JSON(), nullable=True))
    op.execute("UPDATE clusters SET labels = '{}'")
    with op.batch_alter_table("clusters") as b:
        b.alter_column("labels", existing_type=sa.JSON(), nullable=False)
    with op.batch_alter_table("policies") as b:
        b.add_column(sa.Column("clusters", sa.JSON(), nullable=True))


def downgrade():
    policies = sa.table("policies", sa.column("id", sa.Integer), sa.column("clusters", sa.JSON))
    bind = op.get_bind()
    targeted = bind.execute(
        sa.select(policies.c.id, policies.c.clusters).where(policies.c.clusters.isnot(None))
    ).all()
    for id_, target in targeted:
        if target != {"selector": {}}:
            bind.execute(policies.delete().where(policies.c.id == id_))
    with op.batch_alter_table("policies") as b:
        b.drop_column("clusters")
    with op.batch_alter_table("clusters") as b:
        b.drop_column("labels")
