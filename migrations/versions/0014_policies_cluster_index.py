"""An index on the policies' cluster

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 18:20:00.000000

Each cluster reads the policies governing it, its own and the fleet-wide ones (cluster_id NULL),
at every webhook snapshot reload and recommender run. Without an index on the cluster both
databases read every policy of the fleet and filtered them: a cost that grew with the number of
clusters (benchmarks/fleet.py). The other per-cluster tables are read by their unique keys,
which lead with the cluster (0013).
"""

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.create_index("ix_policies_cluster_id", ["cluster_id"], unique=False)


def downgrade():
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.drop_index("ix_policies_cluster_id")
