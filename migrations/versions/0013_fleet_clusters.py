"""A fleet: a clusters table, and the cluster of every per-cluster row

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 15:35:00.000000

A single-cluster database moves into the fleet shape without loss: one `clusters` row (its uid
unclaimed: the first rightsizer to start with this database claims it, app.store.clusters), and
every row of recommendations, history, conditions, checkpoints, node groups, scalers, audit
events, node levels and policies assigned to it. Each unique key gains the cluster in front, so
two clusters may hold the same workload; a policy keeps its fleet-wide (namespace, name) key and
may target every cluster (cluster_id NULL). A downgrade keeps the first cluster's rows only: the
single-cluster shape cannot hold two clusters' workloads under one key.
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

KEY = ["namespace", "kind", "name", "container"]
# table: its unique key before (None: none), with the cluster in front after
UNIQUE = {
    "recommendations": KEY,
    "checkpoints": KEY,
    "workload_conditions": ["namespace", "kind", "name", "type"],
    "node_group_recommendations": [*KEY, "node_group"],
    "scalers": ["name"],
    "node_levels": ["name"],
    "recommendation_history": None,
    "audit_events": None,
}


def _unique_name(table, columns):
    """The unique constraint's name as the database holds it (PostgreSQL names unnamed ones
    itself; SQLite reflects them unnamed, and batch mode names them by NAMING)."""
    for uq in sa.inspect(op.get_bind()).get_unique_constraints(table):
        if uq["column_names"] == columns and uq["name"]:
            return uq["name"]
    return NAMING["uq"] % {"table_name": table, "column_0_N_name": "_".join(columns)}


def upgrade():
    op.create_table(
        "clusters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(length=253), nullable=True),
        sa.Column("name", sa.String(length=253), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clusters")),
        sa.UniqueConstraint("uid", name=op.f("uq_clusters_uid")),
    )
    # its key from the table's own sequence (PostgreSQL's would not know of a key given here)
    op.execute("INSERT INTO clusters (uid, name, created_at) VALUES (NULL, '', CURRENT_TIMESTAMP)")
    first = "(SELECT min(id) FROM clusters)"
    for table, key in UNIQUE.items():
        old = _unique_name(table, key) if key else None
        with op.batch_alter_table(table, naming_convention=NAMING) as b:
            b.add_column(sa.Column("cluster_id", sa.Integer(), nullable=True))
        op.execute(f"UPDATE {table} SET cluster_id = {first}")
        with op.batch_alter_table(table, naming_convention=NAMING) as b:
            b.alter_column("cluster_id", existing_type=sa.Integer(), nullable=False)
            b.create_foreign_key(
                op.f(f"fk_{table}_cluster_id_clusters"), "clusters", ["cluster_id"], ["id"]
            )
            if old:
                b.drop_constraint(old, type_="unique")
                b.create_unique_constraint(
                    op.f(f"uq_{table}_cluster_id_{'_'.join(key)}"), ["cluster_id", *key]
                )
    with op.batch_alter_table("recommendation_history", naming_convention=NAMING) as b:
        b.drop_index("ix_recommendation_history_key")
        b.create_index(
            "ix_recommendation_history_key", ["cluster_id", *KEY, "time"], unique=False
        )
    with op.batch_alter_table("audit_events", naming_convention=NAMING) as b:
        b.create_index("ix_audit_events_cluster_time", ["cluster_id", "time"], unique=False)
    with op.batch_alter_table("policies", naming_convention=NAMING) as b:
        b.add_column(sa.Column("cluster_id", sa.Integer(), nullable=True))
        b.create_foreign_key(
            op.f("fk_policies_cluster_id_clusters"), "clusters", ["cluster_id"], ["id"]
        )
    # the policies governed the one cluster: they keep to it (not to clusters joining later)
    op.execute(f"UPDATE policies SET cluster_id = {first}")


def downgrade():
    first = "(SELECT min(id) FROM clusters)"
    op.execute(f"DELETE FROM policies WHERE cluster_id IS NOT NULL AND cluster_id <> {first}")
    with op.batch_alter_table("policies", naming_convention=NAMING) as b:
        b.drop_constraint(op.f("fk_policies_cluster_id_clusters"), type_="foreignkey")
        b.drop_column("cluster_id")
    with op.batch_alter_table("audit_events", naming_convention=NAMING) as b:
        b.drop_index("ix_audit_events_cluster_time")
    with op.batch_alter_table("recommendation_history", naming_convention=NAMING) as b:
        b.drop_index("ix_recommendation_history_key")
        b.create_index("ix_recommendation_history_key", [*KEY, "time"], unique=False)
    for table, key in UNIQUE.items():
        op.execute(f"DELETE FROM {table} WHERE cluster_id <> {first}")
        with op.batch_alter_table(table, naming_convention=NAMING) as b:
            if key:
                # op.f: a name the naming convention made, shortened alike where too long
                b.drop_constraint(op.f(f"uq_{table}_cluster_id_{'_'.join(key)}"), type_="unique")
                b.create_unique_constraint(op.f(f"uq_{table}_{'_'.join(key)}"), key)
            b.drop_constraint(op.f(f"fk_{table}_cluster_id_clusters"), type_="foreignkey")
            b.drop_column("cluster_id")
    op.drop_table("clusters")
