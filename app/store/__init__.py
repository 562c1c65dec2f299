"""The database: every SQL query rightsizer makes is built here, and only here.

Callers say what they want (`policies.valid_policies(session, log)`, `events.page(...)`,
`versioned.update_versioned(...)`) and get rows or plain values back; no module outside
`app.store` imports SQLAlchemy (an import-linter contract in setup.cfg holds that). The tables are
`models`, the Flask-SQLAlchemy and Flask-Migrate extensions `extensions`. Modules per table family:

- `recommendations`: what the recommender computed (`results`) saved per batch with its
  checkpoint, the gauges, garbage collection of vanished workloads; `history`: the hourly
  recommendation points.
- `checkpoints`: checkpoint rows back into the model, for the recommender and the histogram views.
- `node_groups`: the recommendations of DaemonSets per node group, with their histograms
  (written whole each run, restored at start, read by the snapshot, the API and the dashboard).
- `snapshot`: what the webhook and the updater load (recommendation targets, history lengths).
- `policies`, `scalers`: rows of the editable resources; `versioned`: their optimistic-concurrency
  create, update and delete.
- `audit`: an audit event added to the change it records, and the action counters;
  `events`: pages of the audit trail.
- `clusters`: this process's cluster in a database that may hold a fleet (`cluster_key`, which
  every per-cluster query filters and writes by).
- `session`: the session type, its own session outside a request, reachability, time conversion
  and the database errors callers may handle.
"""
