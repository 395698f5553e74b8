"""Run a command as an unprivileged user (nobody), as the service user would be, from this checkout.

The tests run as root (`make test` on a fresh machine); the referee runs as its own user. `setpriv`
drops to nobody. A checkout in a private directory (root's 0700 home, say) is out of nobody's
reach, so its venv's Python could not even start: then nobody is given CAP_DAC_READ_SEARCH, which
bypasses read and directory-search checks only (open for reading, traversal), never write checks
(capabilities(7)), so what these tests are about -- what nobody may create, rename or write --
is unchanged. Not root: empty (the caller already is unprivileged).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
READ_ANYWHERE = ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]


@functools.cache
def _checkout_unreachable() -> bool:
    done = subprocess.run([*NOBODY, sys.executable, "-c", "import referee.cli.main"],
                          capture_output=True, timeout=60, cwd="/")
    return done.returncode != 0


def as_nobody() -> list[str]:
    if os.geteuid() != 0:
        return []
    return [*NOBODY, *READ_ANYWHERE] if _checkout_unreachable() else list(NOBODY)
