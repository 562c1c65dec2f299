"""`rightsizer demo` (what `make demo` runs): simulator + rightsizer, recommendations for all; and
a new user's first minutes, done with nothing but what the demo prints and the CLI."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes import config
from kubernetes.utils import parse_quantity

from tests.support.processes import wait_for

pytestmark = pytest.mark.e2e

WORKLOADS = [
    "data/Deployment/etl-worker",
    "data/Deployment/kafka-connect",
    "data/StatefulSet/postgres",
    "kube-system/DaemonSet/node-agent",
    "kube-system/Deployment/coredns",
    "shop/Deployment/catalog",
    "shop/Deployment/checkout",
    "shop/Deployment/frontend",
    "shop/Deployment/recommender",
    "shop/StatefulSet/session-cache",
    "tools/Deployment/ci-runner",
    "tools/Deployment/grafana",
]


def run_demo(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """`rightsizer demo ARGS`, its output; killed after `timeout` seconds with everything it
    started (kill_tree: subprocess.run would kill the demo alone, and leave rightsizer)."""
    with subprocess.Popen(
        [sys.executable, "-m", "app.cli", "demo", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: kill_tree never reaches the tests'
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_demo_shows_current_and_recommended_requests_for_every_workload(tmp_path: Path) -> None:
    out = run_demo(["--port", "0", "--exit-when-ready", "--timeout", "120"], tmp_path, 240)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split("\n\n")[0].splitlines()[1:]
    table = [line.split() for line in lines]
    assert sorted({row[0] for row in table}) == WORKLOADS
    catalog = next(r for r in table if r[0] == "shop/Deployment/catalog")
    # Quantities as Kubernetes prints them; over-provisioned: recommends less.
    assert catalog[2] == "500m" and parse_quantity(catalog[3]) < parse_quantity("500m")
    # frontend's CPU is its HPA's: no recommendation, and the reason (1000m is "1").
    frontend = next(line for line in lines if line.startswith("shop/Deployment/frontend"))
    assert frontend.split()[2:4] == ["1", "-"]
    assert frontend.endswith("cpu: HorizontalPodAutoscaler frontend scales it on cpu")
    # kube-system is never sized: nothing recommended there.
    for line in (line for line in lines if line.startswith("kube-system/")):
        assert line.split()[3] == "-" and line.split()[5] == "-", line
        assert "cpu and memory: namespace kube-system is never sized" in line
    assert "/dashboard/" in out.stdout
    assert (tmp_path / "rightsizer.db").exists() and (tmp_path / "certs" / "ca.crt").exists()


class Terminal:
    """What a terminal shows of a program's output: lines, where a carriage return goes back to
    the start of the line and ESC[K erases the rest of it (a status line rewritten in place)."""

    def __init__(self) -> None:
        self.rows: list[str] = [""]
        self.column = 0

    def feed(self, text: str) -> None:
        for part in re.split(r"(\r\n|\n|\r|\x1b\[K)", text):
            if part in ("\n", "\r\n"):
                self.rows.append("")
                self.column = 0
            elif part == "\r":
                self.column = 0
            elif part == "\x1b[K":
                self.rows[-1] = self.rows[-1][: self.column]
            elif part:
                row = self.rows[-1]
                self.rows[-1] = row[: self.column] + part + row[self.column + len(part) :]
                self.column += len(part)

    def screen(self, height: int) -> list[str]:
        """The last `height` rows (a wide terminal: no line wraps), the one being written too."""
        return self.rows[-height:]


class RunningDemo:
    """`rightsizer demo --port 0` as a user starts it: in a terminal (a pseudo-terminal: its
    own session, Ctrl-C reaches its foreground process group), what it prints kept as shown."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.terminal = Terminal()
        self.output: list[str] = []
        self.lock = threading.Lock()
        self.proc = self._spawn(cwd, env)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _spawn(self, cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
        self.master, slave = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "demo", "--port", "0"],
            cwd=cwd,
            # a crash (an abort at exit, seen once under load) prints every thread's stack
            env={**env, "TERM": "xterm", "PYTHONFAULTHANDLER": "1"},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            # as a terminal's foreground job, Ctrl-C interrupts it: a test run started in the
            # background of a non-interactive shell ignores SIGINT, and the demo inherited that
            preexec_fn=_default_sigint,
        )
        os.close(slave)
        return proc

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the terminal's other side is closed
                return
            if not chunk:
                return
            text = chunk.decode(errors="replace")
            with self.lock:
                self.output.append(text)
                self.terminal.feed(text)

    def screen(self, height: int = 24) -> list[str]:
        with self.lock:
            return self.terminal.screen(height)

    def printed(self) -> str:
        with self.lock:
            return "".join(self.output)

    def wait_for_line(self, start: str, timeout: float) -> float:
        """Waits until a line starting with `start` is on the terminal; when it was seen."""
        wait_for(
            lambda: any(r.startswith(start) for r in self.screen(10_000)),
            timeout,
            f"the demo printing {start!r}: {self.printed()[-3000:]}",
        )
        return time.monotonic()

    def interrupt(self, timeout: float) -> int | None:
        """Ctrl-C, as a terminal sends it (SIGINT to the foreground process group); its exit
        status, or None when it had not ended within `timeout` seconds (then it is killed)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        finally:
            self.close()

    def kill(self) -> None:
        """SIGKILL to the demo and everything it started (kill_tree)."""
        kill_tree(self.proc.pid)
        self.proc.wait(10)

    def close(self) -> None:
        self.reader.join(10)  # the last output read: the terminal's other side closed
        os.close(self.master)


def kill_tree(pid: int) -> None:
    """SIGKILL to process group `pid` (a process leading its own session) and to everything
    started from it: the demo runs `rightsizer serve` in a session of its own
    (app/cli/demo.py), out of reach of a signal to the demo's group, and it would be left
    running, gunicorn and its workers, once the demo is gone. The demo's group is stopped
    first, so that it starts nothing between the walk of its descendants and their end; a
    worker gunicorn forks meanwhile is in gunicorn's group, which is killed as a whole."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGSTOP)
    started = descendants(pid)
    groups = set()
    for p in started:
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(p))
    # only groups led by a process it started (serve's): a pid reused meanwhile is no lead
    for group in (groups & set(started)) - {os.getpgrp()}:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    for p in started:  # and each one, whatever its group
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def descendants(pid: int) -> list[int]:
    """The processes started from `pid`, transitively: each process's parent from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # after "pid (comm) state"
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        found = children.get(todo.pop(), [])
        out += found
        todo += found
    return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # ended meanwhile
        return b""


def running_in(directory: Path) -> list[str]:
    """The processes alive (zombies are not) whose working directory is `directory`: their
    pid and command line."""
    out, where = [], directory.resolve()
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or Path(os.readlink(entry / "cwd")) != where:
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        out.append(f"{entry.name}: {command}")
    return out


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def shell(command: str, env: dict[str, str], timeout: float = 60) -> str:
    done = subprocess.run(
        ["bash", "-c", command], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{command}\n{done.stderr}"
    return done.stdout


def test_a_new_user_right_sizes_a_workload_with_only_what_the_demo_prints(tmp_path: Path) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIGHTSIZER_")}
    env["RIGHTSIZER_CONFIG"] = str(tmp_path / "home" / "rightsizer.yaml")  # the user's context
    started = time.monotonic()
    demo = RunningDemo(tmp_path, env)
    try:
        ready = demo.wait_for_line("Ctrl-C stops the demo.", 180)
        # Its first minute (and a while after the instructions): the jobs run every 10 s, yet
        # the instructions stay on the screen, last, and the steps are followed from there.
        time.sleep(max(0.0, started + 60 - time.monotonic(), ready + 20 - time.monotonic()))
        screen = demo.screen(24)
        assert "# 1. its recommendation" in screen and "Ctrl-C stops the demo." in screen, (
            "\n".join(screen)
        )
        after = screen[screen.index("Ctrl-C stops the demo.") + 1 :]
        assert not any(row.strip() for row in after), "\n".join(screen)
        [log] = [row.split()[1] for row in screen if row.startswith("Logs:")]
        assert "scaler run" in Path(log).read_text()  # the service's log, in the file named
        steps = screen[screen.index("# 1. its recommendation") :]
        printed = screen
        recommend = steps[1]
        apply = "\n".join(steps[steps.index("EOF") - 5 : steps.index("EOF") + 1])
        [watch] = [line for line in steps if line.startswith("KUBECONFIG=") and " -w " in line]
        [back] = [line for line in steps if " policy set-mode " in line]
        [cluster] = [line for line in steps if line.startswith("Cluster:")]
        assert "policy apply -f - <<'EOF'" in apply and "updateMode: Recreate" in apply

        def target() -> tuple[float, float]:
            [catalog] = [
                w for w in json.loads(shell(recommend + " -o json", env)) if w["name"] == "catalog"
            ]
            t = catalog["containers"][0]["target"]
            return float(parse_quantity(t["cpu"])), float(parse_quantity(t["memory"]))

        def catalog_pods() -> set[str]:
            out = shell(cluster.split(":", 1)[1], env)
            return {line.split()[1] for line in out.splitlines() if " catalog-" in line}

        before, wanted = catalog_pods(), target()
        assert len(before) == 2 and wanted[0] < 0.5  # asks for 500m: over-provisioned
        assert shell(apply, env) == "policy shop/catalog created\n"
        watching = subprocess.Popen(
            ["bash", "-c", watch], env=env, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        timer = threading.Timer(120, watching.kill)  # ends the watch, and the loop, at the latest
        timer.start()
        new: list[str] = []
        try:
            assert watching.stdout is not None
            for line in watching.stdout:  # NAME STATUS CPU MEMORY: the pods, then each change
                new = line.split()
                if new[0] not in before | {"NAME"}:
                    break
        finally:
            timer.cancel()
            watching.kill()
            watching.wait()
        assert new and new[0] not in before, "no catalog pod replaced within 120 s"
        cpu, memory = new[2], new[3]
        got = (float(parse_quantity(cpu)), float(parse_quantity(memory)))
        assert got in (wanted, target()), (got, wanted)  # the target when the pod was created
        wait_for(lambda: before - catalog_pods(), 30, "an old catalog pod gone")  # evicted
        evictions = shell(recommend.replace("recommendations list -n shop", "events"), env)
        assert any(" evict " in line and "shop/catalog-" in line for line in evictions.splitlines())
        assert shell(back, env) == "policy shop/catalog: updateMode Recreate -> Off\n"
        server = next(line for line in printed if line.startswith("REST API:")).split()[-1]
        plain = server.replace("https://", "http://").split("/api/")[0]
        wrong = subprocess.run(
            ["bash", "-c", f"{recommend} --server {plain}"], env=env, capture_output=True, text=True
        )
        assert "speaks HTTPS and the request went in plain HTTP" in wrong.stderr
        assert stat.S_IMODE((tmp_path / "home" / "rightsizer.yaml").stat().st_mode) == 0o600
    finally:
        status = demo.interrupt(20)  # Ctrl-C: done within seconds (it took 30 s and more)
    output = demo.printed() + (tmp_path / "rightsizer-demo.log").read_text()
    assert status == 0, output[-3000:]
    assert "SIGKILL" not in output


def test_ctrl_c_while_it_starts_stops_it_cleanly(tmp_path: Path) -> None:
    """Ctrl-C before the demo is ready (rightsizer loading its history): it stops, status 0,
    with no error (it said "rightsizer exited (0) while waiting for recommendations", status 1)
    and no worker killed by gunicorn."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIGHTSIZER_")}
    env["RIGHTSIZER_CONFIG"] = str(tmp_path / "home" / "rightsizer.yaml")
    demo = RunningDemo(tmp_path, env)
    try:
        kubeconfig = tmp_path / "rightsizer-sim.kubeconfig"

        def leading() -> bool:  # rightsizer's jobs started: it is loading its history
            if not kubeconfig.exists():
                return False
            api = k8s.CoordinationV1Api(config.new_client_from_config(str(kubeconfig)))
            try:
                return bool(api.list_namespaced_lease("rightsizer").items)
            finally:
                api.api_client.close()

        wait_for(leading, 120, "rightsizer's jobs holding their lease")
    finally:
        status = demo.interrupt(20)
    output = demo.printed()
    log = tmp_path / "rightsizer-demo.log"
    assert status == 0, output[-3000:]
    assert "Error" not in output and "SIGKILL" not in output, output[-3000:]
    assert "SIGKILL" not in (log.read_text() if log.exists() else "")
    assert demo.screen(3)[-2:] == ["stopping ...", ""]  # on a line of its own, then the prompt


def test_a_demo_killed_while_it_starts_leaves_nothing_running(tmp_path: Path) -> None:
    """The harness's last resort (Ctrl-C not answered: SIGKILL) ends rightsizer too, which
    the demo runs in a session of its own (gunicorn and its workers): a failing demo test
    leaves no process behind."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIGHTSIZER_")}
    env["RIGHTSIZER_CONFIG"] = str(tmp_path / "home" / "rightsizer.yaml")
    demo = RunningDemo(tmp_path, env)
    try:

        def serving() -> list[int]:  # gunicorn (rightsizer serve) and at least one worker
            found = [p for p in descendants(demo.proc.pid) if b"gunicorn" in _cmdline(p)]
            return found if len(found) >= 2 else []

        wait_for(serving, 120, "rightsizer serve's gunicorn and a worker")
        demo.kill()
    finally:
        if demo.proc.poll() is None:
            demo.kill()
        demo.close()
    deadline = time.monotonic() + 30  # SIGKILLed: gone within moments
    while (left := running_in(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"left running after the demo was killed: {left}"
