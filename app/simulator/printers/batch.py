"""batch/v1 printers: jobs and cron jobs, re-derived from kubernetes/kubernetes
`pkg/printers/internalversion/printers.go` (printJob, printCronJob and their columns)."""

from __future__ import annotations

from collections.abc import Mapping

from app.simulator.printers.common import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age,
    format_label_selector,
    integer,
    items,
    layout_containers,
    meta,
    name,
    print_bool,
    section,
    wide_selector,
)
from app.simulator.printers.duration import between, since, timestamp


def _condition(job: Obj, type_: str) -> bool:
    """hasJobCondition: the first condition of `type_` decides."""
    for cond in items(section(job, "status").get("conditions")):
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond.get("status") == "True"
    return False


def _job_status(job: Obj) -> str:
    if _condition(job, "Complete"):
        return "Complete"
    if _condition(job, "Failed"):
        return "Failed"
    if meta(job).get("deletionTimestamp") is not None:
        return "Terminating"
    if _condition(job, "Suspended"):
        return "Suspended"
    if _condition(job, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def _completions(job: Obj) -> str:
    spec, succeeded = section(job, "spec"), integer(section(job, "status").get("succeeded"))
    if spec.get("completions") is not None:
        return f"{succeeded}/{integer(spec['completions'])}"
    parallelism = integer(spec.get("parallelism"))
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _duration(job: Obj, now: float) -> str:
    status = section(job, "status")
    if timestamp(status.get("startTime")) is None:
        return ""
    if timestamp(status.get("completionTime")) is None:
        return since(status.get("startTime"), now)
    return between(status.get("startTime"), status.get("completionTime"))


def job_cells(job: Obj, now: float) -> Cells:
    names, images = layout_containers(section(job, "spec"))
    return [
        name(job),
        _job_status(job),
        _completions(job),
        _duration(job, now),
        age(job, now),
        names,
        images,
        format_label_selector(section(job, "spec").get("selector")),
    ]


JOBS = Printer(
    (
        NAME,
        Column("Status", "string", "Complete, Failed, Terminating, Suspended or Running."),
        Column("Completions", "string", "Succeeded pods out of the completions asked for."),
        Column("Duration", "string", "How long the job ran (or has been running)."),
        AGE,
        CONTAINERS,
        IMAGES,
        wide_selector("The label query over the job's pods."),
    ),
    job_cells,
)


def cronjob_cells(cj: Obj, now: float) -> Cells:
    spec, status = section(cj, "spec"), section(cj, "status")
    job_spec = section(spec, "jobTemplate", "spec")
    names, images = layout_containers(job_spec)
    last = status.get("lastScheduleTime")
    return [
        name(cj),
        str(spec.get("schedule") or ""),
        str(spec["timeZone"]) if spec.get("timeZone") is not None else "<none>",
        print_bool(spec.get("suspend")),
        len(items(status.get("active"))),
        since(last, now) if last is not None else "<none>",
        age(cj, now),
        names,
        images,
        format_label_selector(job_spec.get("selector")),
    ]


CRONJOBS = Printer(
    (
        NAME,
        Column("Schedule", "string", "The cron schedule."),
        Column("Timezone", "string", "The time zone of the schedule."),
        Column("Suspend", "boolean", "Whether later runs are suspended."),
        Column("Active", "integer", "How many of its jobs are running."),
        Column("Last Schedule", "string", "How long ago a job was last scheduled."),
        AGE,
        CONTAINERS,
        IMAGES,
        wide_selector("The label query over the jobs' pods."),
    ),
    cronjob_cells,
)

PRINTERS = {"Job": JOBS, "CronJob": CRONJOBS}
