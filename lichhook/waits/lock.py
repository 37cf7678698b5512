"""The operating system's exclusive file lock, waited for in the kernel with a deadline.

A process that wants the lock while another holds it sleeps in the kernel's own queue for
that file and is woken the moment the lock is released, instead of polling: a poller
that sleeps between tries can lose every race to processes that are already running when
the lock changes hands, and on a busy machine that starves it until its deadline.

- POSIX: ``flock``. The blocking call runs in a helper thread on a duplicate of the
  descriptor while the caller waits for it with a timeout. If the deadline passes, the
  helper is abandoned: it closes its duplicate whenever its call returns, which releases
  a lock granted too late. No signal handler is installed, so this works in any thread of
  any program (the MCP server, a test).
- Windows: ``LockFileEx`` on one byte far past the end of the file (Windows byte-range
  locks are mandatory, and the bytes before it are read by waiters). The caller blocks
  in it; a helper thread cancels the call with ``CancelSynchronousIo`` at the deadline.

The OS releases the lock when its holder dies, however it dies.
"""

from __future__ import annotations

import sys

# Windows: the locked byte. Far past any content, so that reading the file never meets it.
LOCK_OFFSET = 1 << 30


def acquire(fd: int, timeout: float) -> bool:
    """Take the exclusive lock on the open file ``fd``: True once held, False if the
    deadline passed first. Raises OSError if the OS refuses the lock outright."""
    if _try(fd):
        return True
    return _wait(fd, timeout)


def release(fd: int) -> None:
    _release(fd)


if sys.platform == "win32":
    import msvcrt
    import os

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

    def _wait(fd: int, timeout: float) -> bool:
        import _thread
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)

        class OVERLAPPED(ctypes.Structure):
            _fields_ = [("Internal", ctypes.c_void_p), ("InternalHigh", ctypes.c_void_p),
                        ("Offset", wintypes.DWORD), ("OffsetHigh", wintypes.DWORD),
                        ("hEvent", wintypes.HANDLE)]

        kernel32.LockFileEx.argtypes = [wintypes.HANDLE, wintypes.DWORD, wintypes.DWORD,
                                        wintypes.DWORD, wintypes.DWORD, ctypes.POINTER(OVERLAPPED)]
        kernel32.OpenThread.restype = wintypes.HANDLE
        kernel32.OpenThread.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
        kernel32.CancelSynchronousIo.argtypes = [wintypes.HANDLE]
        kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
        LOCKFILE_EXCLUSIVE_LOCK = 0x2
        THREAD_TERMINATE = 0x1  # the access CancelSynchronousIo needs
        ERROR_OPERATION_ABORTED = 995

        me = kernel32.OpenThread(THREAD_TERMINATE, False, kernel32.GetCurrentThreadId())
        if not me:
            raise ctypes.WinError(ctypes.get_last_error())
        finished = _thread.allocate_lock()
        finished.acquire()
        guard = _thread.allocate_lock()
        state = {"done": False}

        def canceller() -> None:
            if finished.acquire(timeout=timeout):
                return
            # Until the lock call has returned, cancel it; repeat in case the first cancel
            # arrived before the call had started waiting.
            while True:
                with guard:
                    if state["done"]:
                        return
                    kernel32.CancelSynchronousIo(me)
                if finished.acquire(timeout=0.05):
                    return

        _thread.start_new_thread(canceller, ())
        overlapped = OVERLAPPED(Offset=LOCK_OFFSET, OffsetHigh=0)
        try:
            ok = kernel32.LockFileEx(msvcrt.get_osfhandle(fd), LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0,
                                     ctypes.byref(overlapped))
            error = ctypes.get_last_error()
        finally:
            with guard:
                state["done"] = True
            finished.release()
            kernel32.CloseHandle(me)
        if ok:
            return True
        if error == ERROR_OPERATION_ABORTED:
            return False
        raise ctypes.WinError(error)

else:
    import fcntl
    import os

    def _try(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _wait(fd: int, timeout: float) -> bool:
        import _thread

        # The duplicate shares the lock with ``fd`` (flock belongs to the open file, not
        # to the descriptor), and belongs to the helper alone, so that the caller may
        # close ``fd`` at any time without the helper locking some other file that
        # happens to get the same number.
        mine = os.dup(fd)
        answered = _thread.allocate_lock()
        answered.acquire()
        guard = _thread.allocate_lock()
        state: dict = {"abandoned": False, "error": None}

        def waiter() -> None:
            try:
                fcntl.flock(mine, fcntl.LOCK_EX)
            except OSError as exc:
                state["error"] = exc
            with guard:
                late = state["abandoned"]
                if not late:
                    answered.release()
            # Closing the duplicate keeps the lock while ``fd`` is open; once the caller
            # has given up and closed ``fd`` too, it releases a lock granted too late.
            os.close(mine)

        try:
            _thread.start_new_thread(waiter, ())
        except BaseException:
            os.close(mine)
            raise
        got = answered.acquire(timeout=timeout)
        if not got:
            with guard:
                got = answered.acquire(blocking=False)  # answered just as the deadline passed
                if not got:
                    state["abandoned"] = True
                    return False
        if state["error"] is not None:
            raise state["error"]
        return True
