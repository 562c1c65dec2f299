"""policy update options and workload conditions

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 10:00:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.add_column(sa.Column("update_options", sa.JSON(), nullable=True))

    op.create_table(
        "workload_conditions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.String(length=63), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=253), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=128), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("last_transition_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workload_conditions")),
        sa.UniqueConstraint(
            "namespace",
            "kind",
            "name",
            "type",
            name=op.f("uq_workload_conditions_namespace_kind_name_type"),
        ),
    )


def downgrade():
    op.drop_table("workload_conditions")
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.drop_column("update_options")
