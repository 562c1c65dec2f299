"""Giving a raw answer's connection back to the client's pool: read to its end, or closed.

A typed call made with `_preload_content=False` hands back urllib3's response, whose connection
stays out of the pool until `release_conn`. That puts the connection back as it is: whatever of
the answer was not read stays on it, and the next request sent on that connection reads it as
the start of its own answer. urllib3 checks a pooled connection for waiting bytes before reusing
it, but bytes still on their way pass that check (the API server writes an answer's head and its
body apart; a watch writes whenever an event comes). The evictions of app.kube.posts, which urllib3
does not retry, then read another request's bytes. Seen in CI: the pod read after a 404 resize
was given back unread; the eviction sent next on its connection read the pod's body ("Expected
HTTP/"), was counted as failed although the API server had evicted the pod, and the updater,
its budget given back, evicted a second pod of the same owner.
"""

from __future__ import annotations

from typing import Any


def finish(resp: Any) -> None:
    """For an answer whose body is not wanted: reads the rest of it, then gives the connection
    back (reading fails: urllib3 has closed the connection, which the pool then replaces)."""
    resp.drain_conn()
    resp.release_conn()


def give_back(resp: Any) -> None:
    """For a stream left midway (a watch stopped or whose event could not be read, a LIST whose
    reading failed): the connection is given back only if the answer was read to its end, and is
    closed otherwise. Reading the rest of a watch could take as long as the watch lasts."""
    if not resp.closed:
        resp.close()  # closes the connection too: the pool connects afresh when it is next taken
    resp.release_conn()
