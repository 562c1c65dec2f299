"""scalable targets and selector policies

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 10:00:00.000000

A workload's kind may now be the GroupKind of any controller with a /scale subresource
(`Rollout.argoproj.io`): the kind columns grow from 32 to 317 characters (a kind, a dot, an API
group). Policies keep their target's apiVersion and selector as written in `target_options`.
Downgrading drops what the old schema cannot hold: rows of kinds longer than 32 characters and
policies targeting them.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

KIND_TABLES = ("recommendations", "recommendation_history", "workload_conditions", "checkpoints")
OLD, NEW = sa.String(length=32), sa.String(length=317)


def upgrade():
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.add_column(sa.Column("target_options", sa.JSON(), nullable=True))
        batch_op.alter_column("target_kind", existing_type=OLD, type_=NEW, existing_nullable=True)
    for table in KIND_TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column("kind", existing_type=OLD, type_=NEW, existing_nullable=False)


def downgrade():
    for table in KIND_TABLES:
        op.execute(sa.text(f"DELETE FROM {table} WHERE length(kind) > 32"))
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column("kind", existing_type=NEW, type_=OLD, existing_nullable=False)
    op.execute(sa.text("DELETE FROM policies WHERE length(target_kind) > 32"))
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.alter_column("target_kind", existing_type=NEW, type_=OLD, existing_nullable=True)
        batch_op.drop_column("target_options")
