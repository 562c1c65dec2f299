"""Policies say how their pods are placed: the policy's `placement` (`default`, `waterLevel`)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 15:00:00.000000

A nullable column, None for `default` (app.documents.placement_fields), so existing rows keep
meaning what they meant; a downgrade drops it, and with it the choice of the water-level
scheduler (the pods then keep the scheduler they name).
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.add_column(sa.Column("placement", sa.String(length=32), nullable=True))


def downgrade():
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.drop_column("placement")
