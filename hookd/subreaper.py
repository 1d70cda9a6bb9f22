"""The daemon as child subreaper: a hook's orphans come back to it and die with their run.

Why.  A hook runs in its own session and process group and carries a
``HOOKD_RUN_ID`` marker in its environment; a timeout kills the group and
every marked process.  A descendant that leaves the group (``setsid``) *and*
drops the marker (``env -i``) used to escape both nets, and with its parent
gone it was re-parented to init, out of sight (issue 14:
``(setsid env -i sh -c 'trap "" TERM; sleep 1000' &); sleep 1000``).
With ``prctl(PR_SET_CHILD_SUBREAPER)`` such an orphan is re-parented to the
daemon instead, so it can be found by ancestry — whatever its session or
environment.  cgroups would hold it too, but these machines offer no
delegated cgroup v2 subtree to an unprivileged daemon.

Which run an orphan came from.  Re-parenting erases the original parent, so a
run's processes (:meth:`Subreaper.processes_of`) are gathered from every clue
left: the run's root and its descendants now; its process group; every
process carrying its marker; every descendant seen under the root on an
earlier sweep (:meth:`Subreaper.sweep` snapshots the trees of live runs) that
is still the same process (same start time); and every orphan the daemon
adopted, with its descendants, that was born after the run started, unless
another run claims it (that run's marker, one of that run's pipes open, or
seen in that run's tree).  An orphan that holds one of *this* run's pipes is
this run's outright.  What is left ambiguous — an orphan that scrubbed its
environment, closed its pipes, left before any sweep saw it, while two runs
were live — is counted as the run being killed: a timed-out run cannot leave
an escapee behind, at the price that a concurrent run's equally stealthy
escapee may die with it.

Reaping without stealing.  The daemon now parents processes it never
started, and their zombies are its to reap.  But it also waits for its own
children itself — hook processes on a pidfd (:mod:`hookd.handlers.spawn`),
python workers through ``trio.Process`` — and a ``waitpid(-1)`` or
``waitid(P_ALL)`` that reaps would take their exit status: ``Popen`` then
sees ``ECHILD`` and reports exit code 0, a failing hook turned into a
success.  So the reaper never waits for "any child".  It lists the daemon's
children from /proc and reaps, *by pid* (``waitpid(pid, WNOHANG)``), only a
zombie that (1) is not registered as the daemon's own (registered
synchronously at spawn, before any checkpoint, and the reaper runs on the
same thread, so it never sees an unregistered own child — see "Starts in
worker threads" below for the one exception), (2) is no child this process
started itself (see "One session for the daemon and its hooks"), and (3) was
already a zombie on the
previous sweep — nobody else is waiting for it.  :func:`kill_tree`
(:mod:`hookd.handlers.process`) also reaps, by pid, the adopted orphans it
has just killed, so a timeout leaves no zombie behind.

After the kill.  A process that was mid-fork or mid-exec when the kill looked
can leave a child no look saw: :func:`kill_tree` looks once more when all it
knew are dead, and for ``KILLED_WATCH`` seconds afterwards every sweep kills
an adopted orphan that still carries the killed run's marker or holds one of
its pipes (counted in status as ``late_kills``).  A 5-minute soak under heavy
load (bench/soak.py) found such a survivor before these two nets existed.

One session for the daemon and its hooks.  Embedded in another program (tests,
a library user), the daemon cannot know every child its host starts, so each hook
starts a new session, and a child in *this* process's session is never taken for
an orphan: no descendant of a hook can join that session back, while what a
library or a test started here stays in it.  ``hookd serve`` registers every
child it starts, so there hooks share its session, each in a process group of its
own (:attr:`Subreaper.hooks_share_session`; a new session is a new scheduling
group, slow to get a CPU on busy cores: :mod:`hookd.daemon.own_process`), and an
unregistered child is an orphan whatever its session — but for a starting hook
still in this process's group (:meth:`Subreaper._not_an_orphan`).

Starts in worker threads.  Hooks that start together call ``Popen`` in worker
threads (:func:`hookd.handlers.spawn.start_hook`), so a sweep or a kill on the
loop can run while a child of ours exists that nobody has registered yet: between
its ``fork`` and its registration it is a child in another session, not in
``own`` — exactly what an adopted orphan looks like.  So the loop announces every
such start before handing it to the thread (:meth:`Subreaper.starting`, with the
inodes of the pipes it will be given) and registers the pid
itself when the thread is back (:meth:`Subreaper.settled`); all registry state is
still touched on the loop thread only.  Meanwhile: the sweep reaps no zombie at all
(a zombie shows neither pipes nor environment, so it cannot be told from a starting
hook that already exited; reaping waits for a sweep with no start in flight, when
every child of ours is registered), and a kill never takes for an adopted orphan a
child that holds an announced pipe (from its ``dup2`` until ``exec``, and after while
it keeps its stdio); from its ``exec`` on it carries its run's marker, and a marked
process is never taken for another run's unmarked orphan.  Before its
``dup2`` the child is still in the daemon's session and group, which every look
skips while the start is in flight.  A
starting hook that, within the microseconds before the thread returns, re-``exec``s
with a scrubbed environment *and* closes its stdio would be ambiguous; it is
counted like any other stealthy orphan (see above).
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field

import structlog
import trio

from hookd import proctree

__all__ = ["SUBREAPER", "RunTree", "Subreaper"]

log = structlog.get_logger("hookd.subreaper")

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37

SWEEP_INTERVAL = 1.0
"""Seconds between sweeps: tree snapshots of live runs and reaping of adopted zombies."""
KILLED_WATCH = 10.0
"""Seconds after a run was killed during which sweeps still kill any process of it that
shows up late (one that was mid-fork or mid-exec when the kill looked)."""


@dataclass(eq=False)
class Start:
    """A start handed to a worker thread, as its child can be recognised before it is
    registered: by the inodes of the pipes it is given."""

    pipes: frozenset[int]
    born: int
    """When it was announced, in ticks since boot, one tick early: its child is no older."""


@dataclass
class RunTree:
    """What the daemon knows of one live run (a command hook, an async hook, a python worker)."""

    run_id: str
    root: int
    born: int
    """When the run started, in ticks since boot (:func:`hookd.proctree.boot_ticks_now`)."""
    pipes: frozenset[int]
    """Inodes of the run's stdout/stderr pipes: an orphan holding one is the run's."""
    seen: dict[int, int] = field(default_factory=dict)
    """Descendants seen on sweeps: pid → start time."""
    root_reaped: bool = False
    """The root was reaped: its pid (and so its group's number) may now belong to a newcomer
    — pids wrap quickly where ``pid_max`` is 32768 — and must not be used as the run's."""

    def group(self, table: dict[int, proctree.ProcInfo]) -> int | None:
        """The run's process group number while it still names the run's group, else None.

        Before the root is reaped its pid is held by it.  After, the number stays the
        group's while any member lives (the kernel does not hand out a pid still in use
        as a group id); a process *with that pid* then means the number was reused.
        """
        if self.root_reaped and self.root in table:
            return None
        return self.root


def _prctl() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn: Callable[..., int] = libc.prctl
    except (OSError, AttributeError):
        return None
    return fn


class Subreaper:
    """The process-wide registry: own children, live runs, adopted orphans.

    One per process because the kernel's subreaper flag is per process (and
    tests run several daemons in one); :data:`SUBREAPER` is the instance.
    """

    def __init__(self) -> None:
        self.own: set[int] = set()
        """Children this process started and waits for itself (never reaped here)."""
        self.runs: dict[str, RunTree] = {}
        self.adopted = 0
        """Adopted orphans alive at the last sweep (status)."""
        self.reaped = 0
        """Adopted zombies reaped so far (status)."""
        self._by_root: dict[int, RunTree] = {}
        """Tracked runs by root pid, until the root is reaped."""
        self.killed: dict[str, tuple[RunTree, float]] = {}
        """Runs killed recently (run id → (tree, watch deadline)): see ``KILLED_WATCH``."""
        self.late_kills = 0
        """Processes of killed runs that sweeps found and killed after the kill (status)."""
        self._users = 0
        self._previous = 0
        self._zombies: set[tuple[int, int]] = set()
        self._changed = True
        self._starting: list[Start] = []
        """Starts in worker threads whose child is not registered yet (see the module
        docstring, "Starts in worker threads")."""
        self._own_group: int | None = None
        """This process's own process group while hooks share its session (else None):
        see :attr:`hooks_share_session`."""

    @property
    def hooks_share_session(self) -> bool:
        """Whether hooks start in this process's session (each in a process group of its
        own) rather than each in a new session: see "One session for the daemon and its
        hooks" in the module docstring.  Set once, before anything is spawned."""
        return self._own_group is not None

    @hooks_share_session.setter
    def hooks_share_session(self, share: bool) -> None:
        # This process's group, asked here once rather than for every child a sweep or a
        # kill looks at: it cannot change afterwards.  Only this process can move itself
        # (its parent's setpgid is refused once it has exec'd), and ``hookd serve`` — the
        # one process that shares its session, set before it spawns anything — never
        # calls setsid or setpgid on itself.
        self._own_group = os.getpgid(0) if share else None

    # --- switching it on ----------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self._users > 0

    def enable(self) -> bool:
        """Become a child subreaper (counted: daemons in one process share it).  False
        where the kernel or libc has no ``prctl`` (orphans then go to init)."""
        if self._users == 0:
            prctl = _prctl()
            if prctl is None:
                return False
            previous = ctypes.c_int(0)
            prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(previous), 0, 0, 0)
            if prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                log.warning("cannot become a child subreaper", errno=ctypes.get_errno())
                return False
            self._previous = previous.value
        self._users += 1
        return True

    def disable(self) -> None:
        if self._users == 0:
            return
        self._users -= 1
        if self._users == 0:
            prctl = _prctl()
            if prctl is not None:
                prctl(PR_SET_CHILD_SUBREAPER, self._previous, 0, 0, 0)

    # --- registration (synchronous, on the loop thread) ---------------------------

    def spawned(self, pid: int) -> None:
        """A child this process started and will wait for itself."""
        self.own.add(pid)

    def starting(self, pipe_fds: Iterable[int] = (), *, inodes: Iterable[int] = ()) -> Start:
        """A start is about to leave the loop for a worker thread: until :meth:`settled`,
        no sweep reaps a zombie and no kill takes its child for an orphan.  Its pipes as
        descriptors, or as their ``inodes`` where the caller has them already."""
        start = Start(frozenset({*_inodes(pipe_fds), *inodes}), proctree.boot_ticks_now() - 1)
        self._starting.append(start)
        self._changed = True
        return start

    def settled(self, start: Start, pid: int | None) -> None:
        """The worker thread is back: ``pid`` is the child it started (None: it started
        none).  Registered here, on the loop, in the same step that ends the start."""
        if pid is not None:
            self.spawned(pid)
        self._starting.remove(start)
        self._changed = True

    async def open_process(self, open_child: Callable[[], Awaitable[trio.Process]]) -> trio.Process:
        """Start one of this process's own long-lived children (a python worker, the
        telemetry exporter) with ``trio.lowlevel.open_process``, which starts it in a
        worker thread: announced before, registered after, so no sweep or kill
        meanwhile takes it for an orphan."""
        announced = self.starting(())
        pid: int | None = None
        try:
            child = await open_child()
            pid = child.pid
        finally:
            self.settled(announced, pid)
        return child

    @property
    def starts_in_flight(self) -> int:
        """Starts handed to worker threads and not settled yet."""
        return len(self._starting)

    def waited(self, pid: int) -> None:
        """That child has been reaped by its owner."""
        self.own.discard(pid)
        run = self._by_root.pop(pid, None)
        if run is not None:
            run.root_reaped = True

    def group_of(self, run_id: str, pgid: int) -> int | None:
        """``pgid`` if it may still be signalled as the run's group (see :meth:`RunTree.group`)."""
        run = self.runs.get(run_id)
        if run is None and run_id in self.killed:
            run = self.killed[run_id][0]
        if run is None or not run.root_reaped:
            return pgid
        return None if proctree.info(pgid) is not None else pgid

    def track(
        self,
        run_id: str,
        root: int,
        pipe_fds: Iterable[int] = (),
        *,
        inodes: Iterable[int] | None = None,
    ) -> None:
        """A run started: ``root`` is its first process, ``pipe_fds`` our ends of its pipes
        (``inodes``: their inodes, where the caller has them already)."""
        pipes = _inodes(pipe_fds) if inodes is None else set(inodes)
        # One tick of slack: start times are counted in whole ticks.
        born = proctree.boot_ticks_now() - 1
        run = self.runs[run_id] = RunTree(run_id, root, born, frozenset(pipes))
        self._by_root[root] = run
        self._changed = True

    def untrack(self, run_id: str, *, killed: bool = False) -> None:
        """The run is over.  ``killed``: its processes were killed; sweeps keep watching
        for stragglers of it for ``KILLED_WATCH`` seconds."""
        run = self.runs.pop(run_id, None)
        if run is None:
            return
        if self._by_root.get(run.root) is run:
            del self._by_root[run.root]
        self._changed = True
        if killed:
            self.killed[run_id] = (run, time.monotonic() + KILLED_WATCH)

    # --- finding a run's processes ------------------------------------------------

    def processes_of(self, run_id: str, root: int) -> dict[int, int]:
        """Every live process of the run (see the module docstring): pid → start time."""
        table = proctree.snapshot()
        me = os.getpid()
        mine = table.get(me)
        my_sid = mine.sid if mine is not None else os.getsid(0)
        run = self.runs.get(run_id)
        if run is None and run_id in self.killed:
            run = self.killed[run_id][0]
        group = run.group(table) if run is not None else root
        roots, markers = _marked_roots(table, me, run_id, group)
        if run is None or not run.root_reaped:
            roots.add(root)
        if run is not None:
            for pid, start in run.seen.items():
                seen = table.get(pid)
                if seen is not None and seen.start == start:
                    roots.add(pid)
            roots |= self._adopted_roots(table, run, roots, markers, me, my_sid)
        found = roots | proctree.descendants(table, roots)
        found.discard(me)
        return {pid: table[pid].start for pid in found if pid in table and table[pid].state != "Z"}

    def _adopted_roots(
        self,
        table: dict[int, proctree.ProcInfo],
        run: RunTree,
        roots: set[int],
        markers: Mapping[int, str | None],
        me: int,
        my_sid: int,
    ) -> set[int]:
        """Orphans the daemon adopted (as subreaper) since the run began that share a pipe
        with it — or share none with any other run: unmarked, they can only be found so."""
        others = [r for r in self.runs.values() if r.run_id != run.run_id]
        starting = frozenset[int]().union(*(s.pipes for s in self._starting))
        found: set[int] = set()
        for proc in table.values():
            if (
                proc.ppid != me
                or self._not_an_orphan(proc, my_sid)
                or proc.state == "Z"
                or proc.pid in roots
                or proc.start < run.born
            ):
                continue
            if markers.get(proc.pid) is not None:
                continue  # another run's marker (this run's is in roots already)
            pipes = proctree.pipe_inodes(proc.pid)
            if pipes & starting:
                continue  # a hook starting in a worker thread, not registered yet
            ours = bool(pipes & run.pipes)
            if ours or not any(pipes & o.pipes or proc.pid in o.seen for o in others):
                found.add(proc.pid)
        return found

    def _not_an_orphan(self, proc: proctree.ProcInfo, my_sid: int) -> bool:
        """Whether a child of this process is surely none of the orphans it adopted.

        Registered children are ours.  Where every hook starts a new session, so is
        anything in this process's session: no descendant of a hook can join it back,
        and what a library or a test started here stays in it.  Where hooks share the
        session, it tells nothing, and one more case is ours: a child still in this
        process's own group, born since a start now in flight was announced — a hook
        between its ``vfork`` and its ``setpgid``, whose descriptors (the announced
        pipes) this process cannot read when it is not dumpable.  An orphan that joined
        the group could pass for one only if it was also born in those microseconds.
        """
        if proc.pid in self.own:
            return True
        if not self.hooks_share_session:
            return proc.sid == my_sid
        if not self._starting or proc.pgid != self._own_group:
            return False
        return proc.start >= min(start.born for start in self._starting)

    # --- reaping --------------------------------------------------------------------

    def reap(self, pids: Iterable[int]) -> None:
        """Reap, by pid, those of ``pids`` that are adopted zombies (never an own child)."""
        for pid in pids:
            if pid not in self.own:
                self._reap_one(pid)

    def _reap_one(self, pid: int) -> bool:
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return False  # not our child (or already reaped)
        except OSError as exc:
            if exc.errno != errno.ECHILD:
                log.warning("waitpid failed", pid=pid, error=str(exc))
            return False
        if done:
            self.reaped += 1
        return bool(done)

    def sweep(self) -> None:
        """Snapshot live runs' trees; reap adopted zombies seen on the previous sweep too."""
        if not (self.runs or self._zombies or self.adopted or self._changed or self.killed):
            return  # nothing started, ended or was adopted: no need to read /proc
        self._changed = False
        table = proctree.snapshot()
        me = os.getpid()
        mine = table.get(me)
        my_sid = mine.sid if mine is not None else os.getsid(0)
        if self.killed:
            self._kill_stragglers(table, me, my_sid)
        for run in self.runs.values():
            _remember_tree(run, table)
        zombies: set[tuple[int, int]] = set()
        adopted = 0
        for proc in table.values():
            if proc.ppid != me or self._not_an_orphan(proc, my_sid):
                continue
            if proc.state == "Z":
                zombies.add((proc.pid, proc.start))
            else:
                adopted += 1
        # While a start is in flight a zombie may be its child, exited before the thread
        # was back: reap on a later sweep, when every child of ours is registered.
        for pid, start in zombies & self._zombies if not self._starting else ():
            if self._reap_one(pid):
                zombies.discard((pid, start))
        self._zombies = zombies
        self.adopted = adopted

    def _kill_stragglers(self, table: dict[int, proctree.ProcInfo], me: int, my_sid: int) -> None:
        """KILL adopted orphans of recently killed runs that outlived their kill.

        Only the daemon's own adopted children are examined (few, usually none), and
        only sure signs count here: the run's marker, or one of its pipes still open.
        """
        now = time.monotonic()
        for run_id in [r for r, (_, deadline) in self.killed.items() if now > deadline]:
            del self.killed[run_id]
        orphans = [
            p
            for p in table.values()
            if p.ppid == me and not self._not_an_orphan(p, my_sid) and p.state != "Z"
        ]
        for orphan in orphans if self.killed else []:
            marker = proctree.run_marker(orphan.pid)
            pipes = proctree.pipe_inodes(orphan.pid)
            owner = next(
                (r for r, (run, _) in self.killed.items() if marker == r or pipes & run.pipes),
                None,
            )
            if owner is None:
                continue
            doomed = {orphan.pid} | proctree.descendants(table, (orphan.pid,))
            log.warning(
                "killing late processes of a killed hook run", run=owner, pids=sorted(doomed)
            )
            for pid in doomed:
                try:
                    os.kill(pid, signal.SIGKILL)
                    self.late_kills += 1
                except OSError:
                    pass

    async def run(self, interval: float = SWEEP_INTERVAL) -> None:
        """Sweep every ``interval`` seconds (the daemon runs this, supervised)."""
        while True:
            await trio.sleep(interval)
            self.sweep()


def _inodes(fds: Iterable[int]) -> set[int]:
    """The inodes of open descriptors (those that are closed already are left out)."""
    inodes = set()
    for fd in fds:
        try:
            inodes.add(os.fstat(fd).st_ino)
        except OSError:
            pass
    return inodes


def _marked_roots(
    table: dict[int, proctree.ProcInfo], me: int, run_id: str, group: int | None
) -> tuple[set[int], dict[int, str | None]]:
    """The run's process group (``group``: None when its number was reused) and every
    process carrying its marker; and each live process's marker, read once for later."""
    markers: dict[int, str | None] = {}
    roots: set[int] = set()
    for proc in table.values():
        if proc.pid == me or proc.state == "Z":
            continue
        if group is not None and proc.pgid == group:
            roots.add(proc.pid)
        marker = markers[proc.pid] = proctree.run_marker(proc.pid)
        if marker == run_id:
            roots.add(proc.pid)
    return roots, markers


def _remember_tree(run: RunTree, table: dict[int, proctree.ProcInfo]) -> None:
    """Keep the run's still-live processes (same start time) and add what is below its
    root or in its process group now, so a process that later escapes is still known."""
    if run.root_reaped:
        return  # the root's pid may be a newcomer's now: nothing below it is the run's
    below = proctree.descendants(table, (run.root,))
    below.update(p.pid for p in table.values() if p.pgid == run.root)
    below.discard(run.root)
    run.seen = {
        pid: start for pid, start in run.seen.items() if pid in table and table[pid].start == start
    }
    run.seen.update((pid, table[pid].start) for pid in below if pid in table)


SUBREAPER = Subreaper()
"""The one registry of this process."""
