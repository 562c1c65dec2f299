"""`rightsizer export --format kustomize|helm-values|patch DIR`: the recommended requests, read
through the REST API like the other client commands, written into DIR as files for manifests kept
in git (app/documents/gitops.py renders them); with `--git`, committed on a branch of the
repository holding DIR, the API's evidence in the message (krr#337, kubernetes/autoscaler#5146).

DIR belongs to the export: it must be empty or hold only files an earlier export wrote (each
starts with app.documents.gitops.HEADER; names starting with `.` are not looked at), so a rerun
can remove the files of workloads that went away without touching anyone else's. Everything is
checked and rendered before the first file is written: bad input writes nothing.

The commit never touches the work tree's other files or the index: on the current branch it
commits DIR's paths alone (`git commit -- DIR`, other staged changes stay staged); on another
branch it builds the commit in a temporary index from that branch's tip (or from HEAD when the
branch does not exist yet) with git's plumbing, and moves only that branch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import click

from app.cli.session import Api, api_options, fail
from app.documents.gitops import FORMATS, HEADER, Export, SameNames, commit_message, render

DEFAULT_BRANCH = "rightsizer/recommendations"


class GitError(Exception):
    pass


def git(
    repo: Path, *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None
) -> str:
    """git's stdout; a failure raises GitError with what git said."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
        check=False,
    )
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip() or f"exit status {done.returncode}"
        raise GitError(f"git {args[0]}: {said}")
    return done.stdout


def owned_files(directory: Path) -> list[Path]:
    """The files in DIR, all written by an earlier export; any other file ends the command."""
    ours: list[Path] = []
    foreign: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(root) / name
            try:
                with path.open(encoding="utf-8") as fh:
                    first = fh.readline()
            except (OSError, UnicodeDecodeError):
                first = ""
            (ours if first == HEADER.splitlines(keepends=True)[0] else foreign).append(path)
    if foreign:
        listed = ", ".join(str(p.relative_to(directory)) for p in foreign[:3])
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        fail(
            f"DIR {directory} holds files `rightsizer export` did not write ({listed}{more}): "
            "give an empty directory, or one an earlier export wrote; nothing written"
        )
    return ours


def write_files(directory: Path, export: Export, old: list[Path]) -> list[str]:
    """Writes the export's files (each atomically) and removes the earlier ones it no longer
    has; returns the paths written or removed, relative to DIR."""
    changed = []
    for rel, text in sorted(export.files.items()):
        path = directory / rel
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=".tmp-", delete=False
        ) as fh:
            fh.write(text)
        os.replace(fh.name, path)
        changed.append(rel)
    for path in old:
        rel = path.relative_to(directory).as_posix()
        if rel not in export.files:
            path.unlink()
            changed.append(rel)
            parent = path.parent
            if parent != directory and not any(parent.iterdir()):
                parent.rmdir()
    return changed


def repository(directory: Path, branch: str) -> Path:
    """The top of the git work tree holding DIR; a bad repository or branch ends the command."""
    if shutil.which("git") is None:
        fail("--git: git is not installed (not on the PATH); nothing written")
    try:
        top = Path(git(directory, "rev-parse", "--show-toplevel").strip())
    except GitError as e:
        fail(f"--git: DIR {directory} is not in a git work tree ({e}); nothing written")
    try:
        git(directory, "check-ref-format", "--branch", branch)
    except GitError:
        fail(f"--branch: {branch!r} is not a valid git branch name; nothing written")
    return top


def commit(top: Path, directory: Path, branch: str, message: str, export: Export) -> str | None:
    """Commits DIR's files on `branch`; the new commit's id, None when nothing changed."""
    prefix = directory.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    try:
        current = git(top, "symbolic-ref", "-q", "--short", "HEAD").strip()
    except GitError:
        current = ""  # detached HEAD
    if current == branch:
        git(top, "add", "-A", "--", prefix or ".")
        if not git(top, "diff", "--cached", "--name-only", "--", prefix or ".").strip():
            return None
        git(top, "commit", "-q", "-F", "-", "--", prefix or ".", stdin=message)
        return git(top, "rev-parse", "HEAD").strip()
    return _commit_elsewhere(top, prefix, branch, message, export)


def _verify(top: Path, rev: str) -> str | None:
    try:
        return git(top, "rev-parse", "-q", "--verify", f"{rev}^{{commit}}").strip()
    except GitError:
        return None


def _commit_elsewhere(
    top: Path, prefix: str, branch: str, message: str, export: Export
) -> str | None:
    """A commit of `branch` (made from HEAD if new) whose DIR is the export's files, built in a
    temporary index: the work tree, the index and HEAD are left as they are."""
    tip = _verify(top, f"refs/heads/{branch}")
    base = tip or _verify(top, "HEAD")
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(top, "read-tree", *([base] if base else ["--empty"]), env=env)
        listed = git(top, "ls-files", "-z", "--", prefix or ".", env=env).split("\0")
        stale = [
            p
            for p in listed
            if p and not any(part.startswith(".") for part in p[len(prefix) :].split("/"))
        ]
        if stale:
            git(top, "update-index", "--force-remove", "--", *stale, env=env)
        for rel, text in sorted(export.files.items()):
            blob = git(top, "hash-object", "-w", "--stdin", stdin=text).strip()
            git(
                top, "update-index", "--add", "--cacheinfo", f"100644,{blob},{prefix}{rel}", env=env
            )
        tree = git(top, "write-tree", env=env).strip()
    if base and git(top, "rev-parse", f"{base}^{{tree}}").strip() == tree:
        return None  # the branch (or HEAD, for a new one) already has these files
    parents = ["-p", base] if base else []
    new = git(top, "commit-tree", tree, *parents, "-F", "-", stdin=message).strip()
    git(top, "update-ref", f"refs/heads/{branch}", new, tip or "0" * 40)
    return new


@click.command("export")
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(FORMATS),
    help="patch: a strategic-merge patch per workload; kustomize: the same and a "
    "kustomization.yaml (a Component) listing them; helm-values: one values.yaml (docs/cli.md).",
)
@click.argument(
    "directory",
    metavar="DIR",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option("-n", "--namespace", help="Only the workloads of this namespace.")
@click.option("--git", "use_git", is_flag=True, help="Commit the files on --branch.")
@click.option(
    "--branch",
    default=DEFAULT_BRANCH,
    show_default=True,
    help="With --git: the branch to commit on (made from HEAD if it does not exist).",
)
@api_options
def export_resources(
    fmt: str, directory: Path, namespace: str | None, use_git: bool, branch: str, api: Api
) -> None:
    """Write the recommended requests into DIR as patches or Helm values for manifests kept in
    git; with --git, commit them on a branch with the evidence in the message."""
    old = owned_files(directory)
    top = repository(directory, branch) if use_git else None
    params = {"namespace": namespace} if namespace else {}
    items = api.call("GET", "/recommendations", params=params).json()["items"]
    try:
        export = render(items, fmt)
    except SameNames as e:
        fail(f"--format kustomize: {e}; nothing written")
    for why in export.left_out:
        click.echo(f"left out: {why}", err=True)
    if not export.workloads:
        where = f" in namespace {namespace!r}" if namespace else ""
        fail(f"no recommendations to export{where}; nothing written")
    changed = write_files(directory, export, old)
    n = len(export.workloads)
    click.echo(
        f"{directory}: {len(export.files)} files for {n} workload{'' if n == 1 else 's'} "
        f"({len(changed)} changed)"
    )
    if top is None:
        return
    try:
        new = commit(top, directory, branch, commit_message(export, fmt), export)
    except GitError as e:
        fail(f"--git: the files are written but not committed: {e}")
    click.echo(f"no change: nothing committed on {branch}" if new is None else f"{branch}: {new}")
