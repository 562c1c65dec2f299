"""recommendation strategies: the policy's recommender, each recommendation's reason, daily usage

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 12:00:00.000000

Policies name their strategy (`recommender`, `recommenderParams`; none: vpa), recommendations
say how they were reached (`reason`), and checkpoints keep the undecayed usage per UTC day the
window strategies read (`daily`; none for a checkpoint saved before).
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.add_column(sa.Column("recommender", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("recommender_params", sa.JSON(), nullable=True))
    with op.batch_alter_table("recommendations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reason", sa.Text(), nullable=True))
    with op.batch_alter_table("checkpoints", schema=None) as batch_op:
        batch_op.add_column(sa.Column("daily", sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table("checkpoints", schema=None) as batch_op:
        batch_op.drop_column("daily")
    with op.batch_alter_table("recommendations", schema=None) as batch_op:
        batch_op.drop_column("reason")
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.drop_column("recommender_params")
        batch_op.drop_column("recommender")
