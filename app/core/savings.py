"""What right-sizing frees (or costs), over the real pods of each workload.

A workload's pods do not always ask for the same: the webhook sized some, an in-place resize
changed one, a rollout is half done. So the recommender records, per container, the SUM of the
requests of the live pods running it and how many they are (`pod_requests`), and a container's
saving is that sum minus the recommendation for each of those pods:

    saving = sum over pods (request - target) = requested - pods x target

A pod without a request counts as requesting 0: applying the recommendation then costs the whole
target, which is what it adds to the scheduler's books. Positive: the recommendation asks for less
(waste today); negative: it asks for more (the container is under-provisioned: a risk).
Workloads and totals add containers up; money multiplies by prices per core-hour and GiB-hour.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.core.pods import ContainerResources

GIB = 2**30
HOURS_PER_MONTH = 730  # 365 x 24 / 12


@dataclass(frozen=True)
class PodRequests:
    """One container's requests over a workload's live pods."""

    pods: int
    cpu: int  # the sum, millicores
    memory: int  # the sum, bytes
    typical_cpu: int | None  # the most common request (the largest among ties); None: unset
    typical_memory: int | None

    @property
    def uniform(self) -> bool:
        """Every pod asks for the typical request."""
        return (self.typical_cpu or 0) * self.pods == self.cpu and (
            self.typical_memory or 0
        ) * self.pods == self.memory


def _typical(values: list[int]) -> int | None:
    if not values:
        return None
    if values.count(values[0]) == len(values):  # the common case: every pod asks the same
        return values[0]
    counts = Counter(values)
    return max(counts, key=lambda v: (counts[v], v))


def pod_requests(requests: Iterable[tuple[int | None, int | None]]) -> PodRequests:
    """(cpu, memory) requests of one container, one pair per live pod (None: not set)."""
    pairs = list(requests)
    n = len(pairs)
    if n and pairs.count(pairs[0]) == n:  # the common case: every pod asks the same
        cpu, memory = pairs[0]
        return PodRequests(n, (cpu or 0) * n, (memory or 0) * n, cpu, memory)
    cpus = [c for c, _ in pairs if c is not None]
    mems = [m for _, m in pairs if m is not None]
    return PodRequests(len(pairs), sum(cpus), sum(mems), _typical(cpus), _typical(mems))


class PodsSeen:
    """The live pods of a workload (or of one of its node groups) a run saw, by name (the first
    of a name kept), each with its containers' resources (app.core.pods.ContainerResources);
    a container's requests over them are summed only when asked."""

    __slots__ = ("_requests", "pods")

    def __init__(self) -> None:
        self.pods: dict[str, Mapping[str, ContainerResources]] = {}
        # each container's requests as last summed, until a pod is added: the recommender keeps
        # a workload's PodsSeen from run to run while none of its pods changed
        self._requests: dict[str, PodRequests | None] = {}

    def add(self, name: str, resources: Mapping[str, ContainerResources]) -> None:
        self.pods.setdefault(name, resources)
        if self._requests:
            self._requests.clear()

    def requests(self, container: str) -> PodRequests | None:
        """pod_requests of the pods running `container`; None when none runs it."""
        if container in self._requests:
            return self._requests[container]
        pairs = [
            (r.cpu_request, r.memory_request)
            for resources in self.pods.values()
            if (r := resources.get(container)) is not None
        ]
        found = self._requests[container] = pod_requests(pairs) if pairs else None
        return found


@dataclass(frozen=True)
class Savings:
    """Millicores and bytes freed; negative: needed."""

    cpu: int = 0
    memory: int = 0

    def __add__(self, other: Savings) -> Savings:
        return Savings(self.cpu + other.cpu, self.memory + other.memory)

    @property
    def cores(self) -> float:
        return self.cpu / 1000

    @property
    def gib(self) -> float:
        return self.memory / GIB

    def per_pod(self, pods: int) -> Savings:
        """The average over `pods` pods (rounded towards zero)."""
        if pods <= 0:
            return Savings()
        return Savings(int(self.cpu / pods), int(self.memory / pods))


def container_savings(
    requested_cpu: int, requested_memory: int, pods: int, target: tuple[int, int]
) -> Savings:
    """The saving of one container over its workload's pods (see the module's docstring)."""
    return Savings(requested_cpu - pods * target[0], requested_memory - pods * target[1])


def total(items: Iterable[Savings]) -> Savings:
    out = Savings()
    for s in items:
        out += s
    return out


@dataclass(frozen=True)
class Prices:
    """What a core and a GiB of requests cost per hour, in `currency`."""

    core_hour: float
    gib_hour: float
    currency: str = "$"

    def per_hour(self, s: Savings) -> float:
        return s.cores * self.core_hour + s.gib * self.gib_hour

    def per_month(self, s: Savings) -> float:
        return self.per_hour(s) * HOURS_PER_MONTH

    def money(self, amount: float) -> str:
        """`$12.30`, `-$0.45`: two decimals, the sign before the currency."""
        sign = "-" if amount < 0 and round(amount, 2) != 0 else ""
        return f"{sign}{self.currency}{abs(amount):,.2f}"

    def rate(self, amount: float) -> str:
        """A unit price, with the decimals it needs (2 to 4): `$0.04`, `$0.005`, `$0.0316`."""
        text = f"{amount:.4f}".rstrip("0")
        if len(text.split(".")[1]) < 2:
            text = f"{amount:.2f}"
        return f"{self.currency}{text}"
