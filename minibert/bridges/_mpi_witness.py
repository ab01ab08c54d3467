"""The witness of an MPI run: a small process that outlives the ranks of its machine.

Run as a script by rank 0 (``minibert.bridges.mpi.Witness``), never imported, in a session
of its own: ``python _mpi_witness.py LISTEN_FD LAUNCHER_PID``.

Why it exists. When a rank of an MPICH run is killed (kill -9, the out-of-memory killer),
mpiexec's proxy kills every other rank with SIGKILL within a millisecond; when mpiexec
itself dies of a signal it does not forward (SIGHUP), the proxy does the same. No rank
runs another instruction, so no rank can say what happened. The launcher kills the
ranks' process groups; this process is in none of them, so it sees them go.

How. Each rank of rank 0's machine connects to the socket of LISTEN_FD and says ``hello
RANK PID``; rank 0 adds ``out FOLDER`` and ``resume COMMAND``. A rank that ends by
itself says ``bye`` first (at exit); a rank that prints its own line and aborts the run
says ``quiet``. A connection that closes without either belongs to a rank that was
killed; the launcher's end is watched too (LAUNCHER_PID, 0 for none). At the first such
end the witness prints one line: the rank (or the launcher) that ended first, how when
the kernel still says, the step the checkpoint in FOLDER holds and the command that
resumes it; then it exits. Its stderr is the launcher's own (rank 0 opened the
launcher's descriptor 2 for it), so the line reaches the user after the launcher is
gone. It exits without a word when every rank said bye, and within two minutes whatever
happens.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import time

LIFETIME_WITHOUT_RANKS = 120.0  # seconds: no rank ever connected, or all left long ago


def _exit_status(pid: int) -> tuple[bool, str | None]:
    """(alive, how it ended when the kernel still holds its exit status, else None)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return False, None
    if fields[0] not in ("Z", "X"):
        return True, None
    try:
        code = int(fields[-1])  # exit_code: the status waitpid would report
    except (ValueError, IndexError):
        return False, None
    if code & 0x7F:
        try:
            return False, f"killed by {signal.Signals(code & 0x7F).name}"
        except ValueError:
            return False, f"killed by signal {code & 0x7F}"
    return False, f"exited with code {code >> 8}"


def _launcher_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip() or "the launcher"
    except OSError:
        return "the launcher"


def _checkpoint(out_dir: str | None) -> str:
    """What the checkpoint in ``out_dir`` holds, in words ("" when there is no folder)."""
    if out_dir is None:
        return ""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    try:
        from minibert.training.pretrain import checkpoint_step

        step = checkpoint_step(out_dir)
    except Exception:  # noqa: BLE001 - a line without the step beats no line
        return ""
    if step is None:
        return "; no checkpoint was written yet: start the run again (without --resume)"
    return f"; the checkpoint holds step {step}"


class Witness:
    def __init__(self, listener: socket.socket, launcher: int) -> None:
        self.listener, self.launcher = listener, launcher
        self.out_dir: str | None = None
        self.ranks: dict[socket.socket, dict] = {}  # connection -> rank, pid, said, data
        self.resume: str | None = None
        self.quiet = False
        self.ever = False  # a rank connected
        self.launcher_name = _launcher_name(launcher) if launcher else "the launcher"
        self.pidfd = None
        if launcher and hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):
                self.pidfd = os.pidfd_open(launcher)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            connection.setblocking(False)
            self.ranks[connection] = {"rank": None, "pid": None, "said": None, "data": b""}
            self.ever = True

    def _read(self, connection: socket.socket) -> bool:
        """Take what the rank sent; False when its connection has ended."""
        entry, open_ = self.ranks[connection], True
        while open_:
            try:
                data = connection.recv(4096)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            open_ = bool(data)
            entry["data"] += data
        *lines, entry["data"] = entry["data"].split(b"\n")
        for line in lines:
            word, _, rest = line.decode("utf-8", "replace").partition(" ")
            if word == "hello":
                rank, pid = rest.split()
                entry["rank"], entry["pid"] = int(rank), int(pid)
            elif word == "resume":
                self.resume = rest
            elif word == "out":
                self.out_dir = rest
            elif word in ("bye", "quiet"):
                entry["said"] = word
                self.quiet = self.quiet or word == "quiet"
        return open_

    def watch(self) -> int:
        last_change = time.monotonic()
        while True:
            watched = [self.listener, *self.ranks] + ([self.pidfd] if self.pidfd else [])
            select.select(watched, [], [], 0.5)
            self._accept()
            # Everything sent before a death is read with it: one pass over all connections.
            ended = [connection for connection in list(self.ranks)
                     if not self._read(connection)]
            killed = []
            for connection in ended:
                entry = self.ranks.pop(connection)
                connection.close()
                last_change = time.monotonic()
                if entry["said"] is None and entry["rank"] is not None:
                    killed.append(entry)
            launcher_alive, launcher_end = (_exit_status(self.launcher) if self.launcher
                                            else (True, None))
            unfinished = killed + [entry for entry in self.ranks.values()
                                   if entry["said"] is None]
            if not self.quiet and (killed or (not launcher_alive and unfinished)):
                self._report(killed, launcher_alive, launcher_end)
                return 0
            if self.ever and not self.ranks:
                return 0
            if time.monotonic() - last_change > LIFETIME_WITHOUT_RANKS and not self.ranks:
                return 0

    def _report(self, killed: list[dict], launcher_alive: bool, launcher_end) -> None:
        if not launcher_alive:
            name = f"{self.launcher_name} (pid {self.launcher})"
            if launcher_end and launcher_end.startswith("killed by"):
                what = (f"{name} was {launcher_end}, which it does not pass on to the ranks "
                        f"(MPICH's mpiexec forwards SIGINT and SIGTERM), and the ranks were "
                        f"killed with it")
            else:
                what = (f"{name} ended before its ranks, and they were killed with it (a "
                        f"signal it does not pass on, such as SIGHUP: MPICH's mpiexec "
                        f"forwards SIGINT and SIGTERM)")
        else:
            launcher = self.launcher_name
            described, causes = [], set()
            for entry in sorted(killed, key=lambda e: e["rank"]):
                _, how = _exit_status(entry["pid"])
                described.append(f"rank {entry['rank']} (pid {entry['pid']})")
                causes.add(how)
            how = causes.pop() if len(causes) == 1 else None
            cause = (f"{how} (kill -9, or the out-of-memory killer)" if how == "killed by SIGKILL"
                     else how if how else
                     "killed (kill -9, the out-of-memory killer, or a crash)")
            if len(described) == 1:
                what = f"{described[0]} was {cause}, and {launcher} ended the other ranks"
            else:
                what = (f"{' and '.join(described)} were {cause} at the same moment ("
                        f"{launcher} names the first by its pid)")
        saved = _checkpoint(self.out_dir)
        resume = (f"; resume with: {self.resume}" if self.resume and "start the run again"
                  not in saved else "")
        line = f"minibert: {what}{saved}{resume}\n"
        with contextlib.suppress(OSError):
            os.write(2, line.encode("utf-8", "replace"))


def main(argv: list[str]) -> int:
    for name in ("SIGINT", "SIGHUP"):  # a signal to a group is the ranks' to handle
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    listener = socket.socket(fileno=int(argv[0]))
    listener.setblocking(False)
    return Witness(listener, int(argv[1])).watch()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
