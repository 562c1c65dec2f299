"""pod request totals and usage history

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 10:00:00.000000

Recommendations keep the sum of the requests of the live pods running each container (savings
over the real pods); history points keep the 50th and 90th percentile of the usage samples since
the point before. Rows written before get the sums their single request implied.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

USAGE = ("usage_cpu_p50", "usage_cpu_p90", "usage_memory_p50", "usage_memory_p90")


def upgrade():
    with op.batch_alter_table("recommendations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("requested_cpu_total", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("requested_memory_total", sa.BigInteger(), nullable=True))
    for resource in ("cpu", "memory"):
        op.execute(
            f"UPDATE recommendations SET requested_{resource}_total = "
            f"current_{resource}_request * replicas WHERE replicas IS NOT NULL"
        )
    with op.batch_alter_table("recommendation_history", schema=None) as batch_op:
        for column in USAGE:
            batch_op.add_column(sa.Column(column, sa.BigInteger(), nullable=True))


def downgrade():
    with op.batch_alter_table("recommendation_history", schema=None) as batch_op:
        for column in reversed(USAGE):
            batch_op.drop_column(column)
    with op.batch_alter_table("recommendations", schema=None) as batch_op:
        batch_op.drop_column("requested_memory_total")
        batch_op.drop_column("requested_cpu_total")
