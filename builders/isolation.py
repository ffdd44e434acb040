"""Untrusted work in a worker process that is stopped from outside at its limit.

A limit the work checks itself (SQLite's progress handler, DuckDB's interrupt) cannot
stop one long step inside the engine: ``instr()`` over two megabyte strings runs for
seconds inside one SQLite VM step, and the handler never gets a turn. So every
statement runs in a worker process, and the limits are enforced by the kernel and the
parent, never by the work:

* CPU: before each call the worker sets its own ``RLIMIT_CPU`` to the next whole second
  past ``cpu_s`` from now, so the kernel kills it (``SIGXCPU``) at most one second of CPU
  past the limit, whatever it is doing; the engine's own limit still stops most queries
  first, at the limit itself, with the same ``timeout`` verdict.
* wall clock: the parent waits at most ``wall_s`` for the answer, then kills the worker
  (a stalled disk, a server that never answers).
* memory: during each call the worker's address space may grow at most
  ``memory_bytes`` past what it had when the call began (``RLIMIT_AS``, set anew before
  every call, so what earlier calls legitimately hold, such as an open DuckDB
  database's reserved pool, does not eat the next statement's share); an engine that
  cannot allocate fails the statement (``too-big``), and a worker that dies of it is
  replaced.

One worker per thread of each process is forked on first use and reused for every
call (a process per statement would cost more than most statements); a worker that
was killed is replaced on the next call, and the databases it had open are opened
again there. Parsing untrusted SQL is bounded too (:func:`cpu_bounded`): in the main
thread by a CPU timer signal, which stops Python work between two bytecodes; in other
threads, and for work that may run long inside compiled code (which the timer cannot
stop), the text is first parsed in the worker.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import mmap
import os
import pickle
import resource
import signal
import struct
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from multiprocessing import Pipe
from typing import Any, TypeVar

from answerable.kernel.errors import SQLError

DEFAULT_MEMORY_BYTES = 1 << 30  # growth of a worker's address space while it runs SQL
# The time limit counts the CPU seconds of the thread running the query, so a busy
# machine gives the same verdicts (and the same build) as an idle one; the wall clock
# only stops a query that waits far longer than that (a stalled disk, a starved process).
WALL_FACTOR = 15
SLOW_CALL_S = 120.0  # opening a database and reading its catalog: our own SQL, not a user's
_T = TypeVar("_T")


class _Worker:
    """One forked child that opens databases and runs calls on them, one at a time."""

    def __init__(self, memory_bytes: int):
        mine, theirs = Pipe()
        self.progress = mmap.mmap(-1, _INDEX_AT + _INDEX.size)  # shared with the child
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's side; it never returns
            try:
                mine.close()
                _release_inherited(theirs.fileno())
                _serve(theirs, memory_bytes, self.progress)
            finally:
                os._exit(70)
        theirs.close()
        self.pid, self.owner, self.conn = pid, os.getpid(), mine
        self.memory_bytes = memory_bytes
        self.handles: dict[int, Any] = {}  # handle -> the opener it was opened with
        self.alive = True
        _LIVE.add(self)
        weakref.finalize(self, _retire, mine, pid)

    def call(self, request: tuple, cpu_s: float, wall_s: float) -> Any:
        """Send ``request``, wait at most ``wall_s`` for the reply; return its value or
        raise the error the worker sent (or the one its death means)."""
        try:
            self.conn.send((request, cpu_s))
            if not self.conn.poll(wall_s):
                self.kill()
                raise SQLError("timeout", f"no answer within {wall_s:g} s (the worker was stopped)")
            status, value = self.conn.recv()
        except (EOFError, OSError):
            raise self._died() from None
        except BaseException:  # Ctrl-C while waiting: the reply would come out of turn
            self.kill()
            raise
        if status == "ok":
            return value
        raise value

    def call_each(
        self, request: tuple, cpu_s: float, wall_s: float
    ) -> tuple[list[tuple], tuple[int, SQLError] | None]:
        """Send ``("each", handle, method, calls)``: the worker runs the calls in turn,
        each under its own limits, and sends their ``(status, value)`` replies in
        groups. Each call may run ``wall_s`` from its start (the worker writes which
        call it started, and when, into ``progress``). Returns the replies received and,
        when a call stopped the worker, its index and error (the calls between the
        replies received and that one ran, but their replies died with the worker)."""
        received: list[tuple] = []
        _mark_start(self.progress, 0)
        try:
            self.conn.send((request, cpu_s))
            while len(received) < len(request[3]):
                started, index = self._started()
                remaining = started + wall_s - time.monotonic()
                if self.conn.poll(max(remaining, 0.0)):
                    received.extend(map(pickle.loads, self.conn.recv()))
                elif remaining <= 0:
                    self.kill()
                    message = f"no answer within {wall_s:g} s (the worker was stopped)"
                    return received, (index, SQLError("timeout", message))
        except (EOFError, OSError):
            error = self._died()
            return received, (self._started()[1], error)
        except BaseException:  # Ctrl-C while waiting: the replies would come out of turn
            self.kill()
            raise
        return received, None

    def _started(self) -> tuple[float, int]:
        """When the worker started its current call of a batch, and that call's index."""
        index = _INDEX.unpack_from(self.progress, _INDEX_AT)[0]  # written last, read first
        return _STARTED.unpack_from(self.progress, 0)[0], index

    def _died(self) -> SQLError:
        """The error that the worker's death means (it is reaped here)."""
        self.alive = False
        _LIVE.discard(self)
        _, status = _reap(self.pid, block=True)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
            return SQLError("timeout", "query ran past its time limit (its worker was stopped)")
        how = _ended_how(status)
        return SQLError("worker-died", f"the worker running the query {how}")

    def kill(self) -> None:
        """Stop the worker at once (it is reaped)."""
        if self.alive:
            self.alive = False
            _LIVE.discard(self)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            _reap(self.pid, block=True)
            self.conn.close()


def _ended_how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"was killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


def _reap(pid: int, block: bool) -> tuple[int, int]:
    try:
        return os.waitpid(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return pid, 0


def _retire(conn, pid: int) -> None:
    """A worker no one uses: closing its pipe ends it (it reads end of file)."""
    conn.close()
    _RETIRED.append(pid)


_STARTED, _INDEX = struct.Struct("<d"), struct.Struct("<q")  # a batch call's start, index
_INDEX_AT = _STARTED.size
_GROUP_BYTES = 1 << 20  # pickled replies of a batch the worker holds before sending them
_LIVE: weakref.WeakSet = weakref.WeakSet()
_RETIRED: list[int] = []
_local = threading.local()


def _forgotten_in_child() -> None:
    """After a fork: the parent's workers are not this process's (their pipes closed)."""
    global _local
    for worker in list(_LIVE):
        worker.alive = False
        worker.conn.close()
    _LIVE.clear()
    _RETIRED.clear()
    _local = threading.local()


os.register_at_fork(after_in_child=_forgotten_in_child)


def current_worker(memory_bytes: int = DEFAULT_MEMORY_BYTES) -> _Worker:
    """This thread's worker, forked now when it has none (or its last one died)."""
    worker = getattr(_local, "worker", None)
    if worker is None or not worker.alive or worker.memory_bytes != memory_bytes:
        _RETIRED[:] = [pid for pid in _RETIRED if _reap(pid, block=False)[0] == 0]
        if worker is not None:
            worker.kill()
        worker = _local.worker = _Worker(memory_bytes)
    return worker


_handles = itertools.count(1)


class IsolatedDatabase:
    """A database opened in the worker (see the module docstring): the same interface as
    the engine's own (``execute``, ``schema``, ``close``, ``dialect``, ``limits``).

    ``opener`` is a picklable ``(function, arguments)`` pair: the worker opens the
    database as ``function(*arguments, limits)`` (a module-level function or a bound
    method, which pickle by name); a worker that was replaced opens it again on the
    next call.
    Opening errors (a missing file, an unreachable server) are raised here, at once. The
    worker opens it from the folder this process was in when it was made: a relative path
    names the same file however the process's folder changes (a worker was forked earlier
    and keeps the folder it had then).
    """

    def __init__(self, opener: tuple, limits, dialect: str):
        self.limits, self.dialect = limits, dialect
        self._opener = opener
        self._folder = os.getcwd()
        self._worker: _Worker | None = None
        self._handle = 0
        self._closed = False
        self._bound()

    def _bound(self) -> tuple[_Worker, int]:
        if self._closed:
            raise SQLError("sql-error", "Cannot operate on a closed database.")
        worker = current_worker(self.limits.memory_bytes)
        if worker is not self._worker or self._handle not in worker.handles:
            handle = next(_handles)
            request = ("open", handle, self._opener, self.limits, self._folder)
            worker.call(request, SLOW_CALL_S, SLOW_CALL_S)
            worker.handles[handle] = self._opener
            self._worker, self._handle = worker, handle
        return worker, self._handle

    def _call(self, method: str, args: tuple, cpu_s: float) -> Any:
        worker, handle = self._bound()
        return worker.call(("call", handle, method, args), cpu_s, _wall_s(cpu_s))

    def execute(
        self,
        sql: str,
        params: tuple | dict = (),
        ordered: bool | None = None,
        row_cap: int | None = None,
        byte_cap: int | None = None,
    ):
        """Run one read-only statement in the worker (the engine's ``execute``), stopped
        at most a second of CPU past ``limits.timeout_s``."""
        args = (sql, params, ordered, row_cap, byte_cap)
        return self._call("execute", args, self.limits.timeout_s)

    def execute_many(self, statements: Sequence[tuple]) -> list:
        """Run each ``(sql, ordered)`` or ``(sql, ordered, params)`` as :meth:`execute`
        would, in one exchange with the worker: a :class:`Result` or the
        :class:`SQLError` it raised, for each.

        Each statement has its own limits in the worker (the CPU limit and the memory cap
        are set anew before it; the parent waits ``wall_s`` for each answer); one that
        stops the worker is a ``timeout`` (or ``worker-died``), and the statements after
        it run in a new worker."""
        calls = [(sql, (*rest, ())[0], ordered, None, None) for sql, ordered, *rest in statements]
        cpu_s = self.limits.timeout_s
        answers: list = []
        stopped: dict[int, SQLError] = {}  # index -> the error of a call that stopped a worker
        while len(answers) < len(calls):
            at = len(answers)
            if at in stopped:
                answers.append(stopped.pop(at))
                continue
            worker, handle = self._bound()
            request = ("each", handle, "execute", calls[at : min(stopped, default=len(calls))])
            received, failed = worker.call_each(request, cpu_s, _wall_s(cpu_s))
            for status, value in received:
                if status == "err" and not isinstance(value, SQLError):
                    raise value  # not the statement's fault: as execute raises it
                answers.append(value)
            if failed is not None:  # the calls before it whose replies were lost run again
                stopped[at + failed[0]] = failed[1]
        return answers

    def schema(self, db_id: str | None = None):
        """The engine's ``schema``, read in the worker."""
        return self._call("schema", (db_id,), SLOW_CALL_S)

    def close(self) -> None:
        """Close the database in the worker (a dead worker closed it already)."""
        self._closed = True
        worker = self._worker
        if worker is not None and worker.alive and self._handle in worker.handles:
            del worker.handles[self._handle]
            if worker.owner == os.getpid():
                worker.call(("close", self._handle), SLOW_CALL_S, SLOW_CALL_S)
        self._worker = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _wall_s(cpu_s: float) -> float:
    return min(WALL_FACTOR * cpu_s + 1.0, 1e6)  # poll() takes no larger timeout


# --- bounded parsing ----------------------------------------------------------------


class _OutOfTime(BaseException):
    """Raised by the CPU timer's signal inside the bounded work (a BaseException, so no
    ``except Exception`` inside the work can swallow it)."""


RETRY_S = 0.05
"""CPU seconds after which the timer fires again, while the bounded work still runs."""


def _on_timer(signum, frame) -> None:
    """Stop the bounded work. Python swallows an exception raised inside a garbage
    collector's callback or a ``__del__`` (it prints "Exception ignored"), so the timer
    is set again first: the work is stopped at the next tick that lands in it."""
    if getattr(_timer_state, "armed", False):
        signal.setitimer(signal.ITIMER_PROF, RETRY_S)
        raise _OutOfTime()


_timer_state = threading.local()


def cpu_bounded(
    work: Callable[[], _T], seconds: float, what: str, probe: tuple, probe_first: bool = False
) -> _T:
    """``work()``, stopped with ``SQLError("too-complex")`` after ``seconds`` of CPU.

    In the main thread a CPU timer (``ITIMER_PROF``) raises inside the work, between two
    Python bytecodes. Another thread cannot take a signal, and compiled code (sqlglot's
    compiled build) runs on to its end before the timer is heard: so in another thread,
    or when the caller says the work may run long (``probe_first``), ``probe`` (a
    picklable ``(function, arguments)`` pair, called as ``function(*arguments)``) first
    runs in the worker under the same limit, which the kernel enforces there, and
    ``work`` only once the probe finished in time.
    """
    if probe_first or threading.current_thread() is not threading.main_thread():
        try:
            current_worker().call(("probe", probe), seconds, _wall_s(seconds))
        except SQLError as error:
            if error.reason != "timeout":
                raise
            raise SQLError("too-complex", f"{what} took more than {seconds:g} s of CPU") from None
        return work()
    previous = signal.signal(signal.SIGPROF, _on_timer)
    _timer_state.armed = True
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return work()
    except _OutOfTime:
        raise SQLError("too-complex", f"{what} took more than {seconds:g} s of CPU") from None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        _timer_state.armed = False
        signal.signal(signal.SIGPROF, previous)


# --- the worker's side --------------------------------------------------------------


def _release_inherited(keep: int) -> None:  # pragma: no cover - runs in the child
    """Point every file the fork copied from the parent, but the pipe ``keep``, at
    /dev/null. A copied pipe or socket (a browser driver's pipe, a server's socket) would
    stay open while the worker lives, so the other end never saw the parent close it; the
    fd numbers stay taken, so nothing the parent's objects hold is reused for another file."""
    null = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in (keep, null):
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
    os.close(null)


def _serve(conn, memory_bytes: int, progress: mmap.mmap) -> None:  # pragma: no cover - child
    """The worker's loop: one request at a time until the parent closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGPROF, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _as_cap[:] = [None, -1, -1]  # nothing the parent held
    opened: dict[int, Any] = {}
    while True:
        try:
            request, cpu_s = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            os._exit(0)
        if request[0] == "each":
            _serve_each(conn, request, cpu_s, memory_bytes, opened, progress)
        else:
            reply = _reply(request, cpu_s, memory_bytes, opened)
            try:
                conn.send(reply)
            except Exception as error:  # an answer that cannot be pickled: a bug, say so
                conn.send(("err", RuntimeError(f"worker reply not sendable: {error!r}")))


def _serve_each(conn, request, cpu_s, memory_bytes, opened, progress) -> None:  # pragma: no cover
    """One call after another, each under its own limits; the pickled replies go to the
    parent in groups of about :data:`_GROUP_BYTES`. Before each call its start and index
    are written to ``progress`` (the index last), for the parent's wall clock."""
    _, handle, method, calls = request
    group: list[bytes] = []
    size = 0
    for index, args in enumerate(calls):
        _mark_start(progress, index)
        reply = _reply(("call", handle, method, args), cpu_s, memory_bytes, opened)
        group.append(_pickled(reply))
        size += len(group[-1])
        if size >= _GROUP_BYTES or index == len(calls) - 1:
            conn.send(group)
            group, size = [], 0


def _mark_start(progress: mmap.mmap, index: int) -> None:
    """Call ``index`` of a batch starts now (the index is written last)."""
    _STARTED.pack_into(progress, 0, time.monotonic())
    _INDEX.pack_into(progress, _INDEX_AT, index)


def _reply(request, cpu_s, memory_bytes, opened) -> tuple:  # pragma: no cover - child
    """Answer one request under its limits (in the worker): ``(status, value)``."""
    _cap_cpu(cpu_s)
    _cap_memory(memory_bytes)
    try:
        return "ok", _answer(request, opened)
    except MemoryError:
        return "err", SQLError("too-big", "the query needed more memory than its limit")
    except Exception as error:  # sent to the caller, who raises it
        return "err", error


def _pickled(reply: tuple) -> bytes:  # pragma: no cover - child
    try:
        return pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # an answer that cannot be pickled: a bug, say so
        return pickle.dumps(("err", RuntimeError(f"worker reply not sendable: {error!r}")))


def _answer(request: tuple, opened: dict) -> Any:
    kind = request[0]
    if kind == "call":
        _, handle, method, args = request
        return getattr(opened[handle], method)(*args)
    if kind == "open":
        _, handle, (opener, arguments), limits, folder = request
        os.chdir(folder)
        opened[handle] = opener(*arguments, limits)
        return None
    if kind == "close":
        opened.pop(request[1]).close()
        return None
    probe, arguments = request[1]
    return probe(*arguments)


_cpu_cap = [-1]  # the soft RLIMIT_CPU set last (a system call saved when it stays)


def _cap_cpu(cpu_s: float) -> None:
    """The kernel stops this process at the first whole second of CPU past ``cpu_s``
    from now (``SIGXCPU``); the hard limit stays where it was."""
    soft = math.floor(time.process_time() + cpu_s) + 1
    if soft == _cpu_cap[0]:
        return
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    _cpu_cap[0] = soft


_as_cap: list = [None, -1, -1]  # /proc/self/statm kept open, the hard and the soft limit set


def _cap_memory(memory_bytes: int) -> None:
    """The address space may grow ``memory_bytes`` past its size now (the soft limit
    may go up again later: it stays under the hard one)."""
    try:
        if _as_cap[0] is None:
            _as_cap[0] = os.open("/proc/self/statm", os.O_RDONLY)
            _as_cap[1] = resource.getrlimit(resource.RLIMIT_AS)[1]
        size = int(os.pread(_as_cap[0], 64, 0).split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return
    hard = _as_cap[1]
    soft = size + memory_bytes
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    if soft != _as_cap[2]:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        _as_cap[2] = soft
