"""The history's key index takes the container too: (namespace, kind, name, container, time)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 20:00:00.000000

The recommender reads each container's newest history point and trims its points older than eight
days, batch by batch. Without the container in the index, SQLite read every point of each key's
workload from the table to compare the container (192 per container a week on): with eight days
of history at 15,000 containers a run's save took 4.7 s, with it 3.8 s
(benchmarks/history_save.py). Rebuilding the index reads the table once (about 3 s for 2.9
million points).
"""

from alembic import op

# revision identifiers, used by Alembic.
revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

INDEX = "ix_recommendation_history_key"


def upgrade():
    with op.batch_alter_table("recommendation_history", schema=None) as batch_op:
        batch_op.drop_index(INDEX)
        batch_op.create_index(
            INDEX, ["namespace", "kind", "name", "container", "time"], unique=False
        )


def downgrade():
    with op.batch_alter_table("recommendation_history", schema=None) as batch_op:
        batch_op.drop_index(INDEX)
        batch_op.create_index(INDEX, ["namespace", "kind", "name", "time"], unique=False)
