"""A child process's standard output, drained on a thread with the time each line arrived."""

from __future__ import annotations

import subprocess
import threading
import time


class Reader:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[tuple[float, str]] = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self.run, args=(proc,), daemon=True)
        self.thread.start()

    def run(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with self.cond:
                self.lines.append((time.monotonic(), line.rstrip("\n")))
                self.cond.notify_all()

    def first(self, prefix: str, timeout: float) -> float | None:
        """When the first line starting with `prefix` arrived (waiting up to `timeout` s)."""

        def found() -> float | None:
            return next((t for t, line in self.lines if line.startswith(prefix)), None)

        with self.cond:
            self.cond.wait_for(lambda: found() is not None, timeout)
            return found()

    def text(self, last: int | None = None) -> str:
        with self.cond:
            lines = [line for _, line in self.lines]
        return "\n".join(lines[-last:] if last else lines)
