"""The operating system's exclusive file lock, waited for in the kernel with a deadline,
and served in turn.

A process that wants the lock while another holds it sleeps in the kernel until it may
go on, instead of polling: a poller that sleeps between tries loses every race to
processes that are already running when the lock changes hands, and on a busy machine
that starves it until its deadline. Sleeping in the kernel is not enough on its own:
``flock`` wakes every waiter at once when the lock is released and the first to run takes
it, so on a loaded machine a process can still lose round after round. So waiters queue:

- POSIX: ``take_turn``. Each waiter adds a node, a file named by a ticket number, to a
  queue folder, holds a ``flock`` on it while it waits and holds the lock, and sleeps in
  ``flock`` on the node of the waiter before it: it is woken when that one is done (or
  dies, or gives up), and then takes the real lock, whose ``flock`` alone guarantees that
  one process holds it. A process that finds the lock free and nobody queued takes it at
  once. The blocking calls run in a helper thread on duplicate descriptors while the
  caller waits for it with a timeout; if the deadline passes the helper is abandoned and
  closes its duplicates whenever its calls return, which releases anything granted too
  late. No signal handler is installed, so this works in any thread of any program.
- Windows: a lock on one byte far past the end of the file (Windows byte-range locks are
  mandatory, and the bytes before it are read by waiters), taken with non-blocking tries
  a few milliseconds apart until the deadline: a deadline that needs no call cancelled.
  Waiters are not queued: the first try after a release wins.

The OS releases every lock a process holds when it dies, however it dies.
"""

import os
import sys
import time  # loaded at start-up

# Windows: the locked byte. Far past any content, so that reading the file never meets it.
LOCK_OFFSET = 1 << 30


class Turn:
    """The lock held, taken in turn; ``end`` releases it and wakes the next waiter."""

    def __init__(self, fd: int, queue: object = None, node: "str | None" = None, node_fd: int = -1) -> None:
        self.fd = fd
        self.queue = queue
        self.node = node
        self.node_fd = node_fd

    def end(self) -> None:
        try:
            _release(self.fd)
        finally:
            if self.node is not None:
                _leave(self.queue, self.node, self.node_fd)


def take_turn(queue: object, fd: int, timeout: float) -> "Turn | None":
    """Take the lock on ``fd`` in turn: a Turn once held, None if the deadline passed
    first. ``queue`` is the folder (a ``diskio.Dir``) the POSIX queue keeps its nodes in;
    Windows, where waiters are not queued, ignores it."""
    return _take_turn(queue, fd, timeout)


if sys.platform == "win32":
    import msvcrt

    def _try(fd: int) -> bool:
        os.lseek(fd, LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _release(fd: int) -> None:
        os.lseek(fd, LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

    def _take_turn(queue: object, fd: int, timeout: float) -> "Turn | None":
        return Turn(fd) if _try(fd) or _wait(fd, timeout) else None

    def _leave(queue: object, node: str, node_fd: int) -> None:
        pass  # no nodes on Windows

    def _wait(fd: int, timeout: float) -> bool:
        """Non-blocking tries until one succeeds or the deadline passes. A blocked
        ``LockFileEx`` would keep Windows' first-come order, but its deadline needed the
        call cancelled from another thread, which not every Windows implementation does
        (under wine an op waited as long as the holder, 15 s against a 10 s deadline).
        The pause between tries starts at 1 ms and doubles up to 20 ms: a short hold is
        taken over at once, and a waiter checks often enough not to lose every hand-over
        to a process that was already running."""
        deadline = time.monotonic() + timeout
        pause = 0.001
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(pause, remaining))
            if _try(fd):
                return True
            pause = min(pause * 2, 0.02)

else:
    import _thread  # loaded at start-up
    import fcntl

    def _try(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _wait(fd: int, timeout: float) -> bool:
        return _wait_in_order([fd], timeout)

    def _wait_in_order(fds: list, timeout: float) -> bool:
        """flock each of ``fds`` in order, blocking; True once all are held, False if the
        deadline passed first."""
        # The duplicates share the locks with ``fds`` (flock belongs to the open file, not
        # to the descriptor) and belong to the helper alone, so that the caller may close
        # ``fds`` at any time without the helper locking some other file that happens to
        # get the same number.
        mine = [os.dup(fd) for fd in fds]
        answered = _thread.allocate_lock()
        answered.acquire()
        guard = _thread.allocate_lock()
        state: dict = {"abandoned": False, "error": None}

        def waiter() -> None:
            try:
                for fd in mine:
                    fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                state["error"] = exc
            with guard:
                if not state["abandoned"]:
                    answered.release()
            # Closing the duplicates keeps the locks while ``fds`` are open; once the
            # caller has given up and closed them too, this releases locks granted late.
            for fd in mine:
                os.close(fd)

        try:
            _thread.start_new_thread(waiter, ())
        except BaseException:
            for fd in mine:
                os.close(fd)
            raise
        got = answered.acquire(timeout=max(timeout, 0))
        if not got:
            with guard:
                got = answered.acquire(blocking=False)  # answered just as the deadline passed
                if not got:
                    state["abandoned"] = True
                    return False
        if state["error"] is not None:
            raise state["error"]
        return True

    def _take_turn(queue, fd: int, timeout: float) -> "Turn | None":  # type: ignore[no-untyped-def]
        if _try(fd):
            if not _tickets(queue):
                return Turn(fd)
            _release(fd)  # others are queued: no cutting in
        deadline = time.monotonic() + timeout
        joined = _join(queue, deadline)
        if joined is None:
            return None
        node, node_fd, ahead_fd = joined
        try:
            fds = [ahead_fd, fd] if ahead_fd >= 0 else [fd]
            got = _wait_in_order(fds, deadline - time.monotonic())
        finally:
            if ahead_fd >= 0:
                os.close(ahead_fd)
        if not got:
            _leave(queue, node, node_fd)  # the one behind takes its chance at the lock
            return None
        return Turn(fd, queue, node, node_fd)

    def _tickets(queue) -> list:  # type: ignore[no-untyped-def]
        try:
            return sorted(int(n) for n in queue.names() if n.isdigit() and n.isascii())
        except OSError:
            return []

    def _join(queue, deadline: float) -> "tuple | None":  # type: ignore[no-untyped-def]
        """(node name, its locked descriptor, the node ahead's descriptor or -1), made
        under the queue folder's own lock so that tickets are handed out one by one."""
        if not (_try(queue.fd) or _wait(queue.fd, deadline - time.monotonic())):
            return None
        try:
            tickets = _tickets(queue)
            node = str(tickets[-1] + 1 if tickets else 1)
            ahead_fd = -1
            while tickets:
                # The last node is the one to wait behind, unless nobody holds it: its
                # owner died without leaving, and it is swept away.
                last = str(tickets.pop())
                try:
                    candidate = queue.open_file(last, os.O_RDONLY)
                except OSError:
                    continue  # left this instant
                if _try(candidate):
                    os.close(candidate)
                    try:
                        queue.unlink(last)
                    except OSError:
                        pass
                    continue
                ahead_fd = candidate
                break
            try:
                node_fd = queue.open_file(node, os.O_RDWR | os.O_CREAT | os.O_EXCL)
                fcntl.flock(node_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BaseException:
                if ahead_fd >= 0:
                    os.close(ahead_fd)
                raise
            return node, node_fd, ahead_fd
        finally:
            _release(queue.fd)

    def _leave(queue, node: str, node_fd: int) -> None:  # type: ignore[no-untyped-def]
        try:
            queue.unlink(node)
        except OSError:
            pass  # a node left behind is swept by the next waiter that finds it unheld
        os.close(node_fd)
