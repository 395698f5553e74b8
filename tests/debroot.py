"""A clean Debian bookworm root for installer tests, cached between runs.

``debootstrap --variant=minbase --include=systemd`` is what a fresh Raspberry Pi OS Lite image
is underneath (Raspberry Pi OS is Debian bookworm plus the Raspberry Pi archive, and always has
systemd). Making one takes about half a minute with a nearby mirror, so it is made once and kept
as a tarball under the temp directory (``$TABLE_REFEREE_TEST_CACHE`` to move it); each test
unpacks a private copy. Downloaded .debs and the Python wheels are cached the same way.

The Raspberry Pi archive's own packages are replaced by stand-ins with the same names and the
same contents' shape (`standin_debs`): ``python3-lgpio`` installs a ``lgpio`` module that, like
the real one, makes its notification FIFO in the current directory at import;
``python3-rpi-lgpio`` installs the ``RPi.GPIO`` shim's package. They are served from a local
apt repository, so install.sh meets them exactly as it would on a Pi.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

MIRROR = os.environ.get("TABLE_REFEREE_DEBIAN_MIRROR", "http://deb.debian.org/debian")
CACHE = Path(os.environ.get("TABLE_REFEREE_TEST_CACHE")
             or Path(tempfile.gettempdir()) / "table-referee-test-cache")
REPO = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def locked(name: str, wait: bool = True) -> Iterator[bool]:
    """Hold the cache's lock `name` (an flock shared by every run on this machine); with `wait`
    False, only if it is free now (the block is told whether it holds it)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def link_tree(src: Path, dest: Path, pattern: str) -> None:
    """The files of `src` matching `pattern` that `dest` lacks, hard-linked there (copied where
    the two are on different file systems)."""
    dest.mkdir(parents=True, exist_ok=True)
    for path in src.glob(pattern):
        target = dest / path.name
        if target.exists():
            continue
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)


def bookworm_tarball() -> Path:
    """The cached minbase + systemd root (made on first use)."""
    tarball = CACHE / "bookworm-minbase-systemd.tar"
    with locked("root"):
        if tarball.exists():
            return tarball
        work = Path(tempfile.mkdtemp(prefix="bookworm-", dir=CACHE))
        work.chmod(0o755)  # apt inside the new root downloads as _apt, who must reach it
        try:
            subprocess.run(["debootstrap", "--variant=minbase", "--include=systemd,ca-certificates",
                            "bookworm", str(work), MIRROR], check=True, capture_output=True,
                           timeout=900)
            partial = tarball.with_suffix(".partial")
            with tarfile.open(partial, "w") as tar:
                tar.add(work, arcname=".")
            partial.replace(tarball)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return tarball


def wheelhouse() -> Path:
    """Wheels for the referee's dependencies (and hatchling, its build backend), downloaded
    with the host's pip once per set of requirements: the root installs with --no-index."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    wanted = sorted({*data["project"]["dependencies"], *data["project"]["optional-dependencies"]
                     ["audio"], *data["build-system"]["requires"]})
    key = hashlib.sha256("\n".join(wanted).encode()).hexdigest()[:12]
    target = CACHE / f"wheels-{key}"
    with locked("wheels"):
        if not (target / ".complete").exists():
            target.mkdir(parents=True, exist_ok=True)
            subprocess.run([str(REPO / ".venv/bin/python"), "-m", "pip", "download", "--quiet",
                            "--only-binary=:all:", "--dest", str(target), *wanted], check=True,
                           capture_output=True, timeout=600)
            (target / ".complete").touch()
    return target


LGPIO_STANDIN = '''\
"""Stand-in for Raspberry Pi OS's python3-lgpio: like lgpio.py, it makes its notification FIFO
(.lgd-nfy0) in the current directory at import, so importing it from an unwritable directory
fails as the real one does. There is no GPIO chip here, so nothing else works."""
import os

if os.path.exists(".lgd-nfy0"):
    os.remove(".lgd-nfy0")
os.mkfifo(".lgd-nfy0")
STANDIN = True


class error(Exception):
    pass


def gpiochip_open(chip):
    raise error("no GPIO chip in this test root")
'''


def _deb(out: Path, name: str, files: dict[str, str], depends: str) -> Path:
    build = out / f"{name}-build"
    (build / "DEBIAN").mkdir(parents=True)
    (build / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 0.2.2-1~rpt1\nArchitecture: all\nMaintainer: test stand-in "
        f"<nobody@example.invalid>\nDepends: {depends}\nSection: python\nPriority: optional\n"
        f"Description: stand-in for Raspberry Pi OS's {name} (tests only)\n")
    for path, text in files.items():
        target = build / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    deb = out / f"{name}_0.2.2-1~rpt1_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(build), str(deb)],
                   check=True, capture_output=True)
    shutil.rmtree(build)
    return deb


def standin_repo(out: Path) -> None:
    """A local apt repository (Packages file and .debs) with the Raspberry Pi archive's
    python3-lgpio and python3-rpi-lgpio stand-ins."""
    out.mkdir(parents=True, exist_ok=True)
    site = "/usr/lib/python3/dist-packages"
    debs = [
        _deb(out, "python3-lgpio", {f"{site}/lgpio.py": LGPIO_STANDIN}, "python3"),
        _deb(out, "python3-rpi-lgpio", {f"{site}/RPi/__init__.py": "",
                                        f"{site}/RPi/GPIO/__init__.py": "STANDIN = True\n"},
             "python3, python3-lgpio"),
    ]
    stanzas = []
    for deb in debs:
        control = subprocess.run(["dpkg-deb", "-f", str(deb)], check=True, capture_output=True,
                                 text=True).stdout.strip()
        blob = deb.read_bytes()
        stanzas.append(f"{control}\nFilename: ./{deb.name}\nSize: {len(blob)}\n"
                       f"SHA256: {hashlib.sha256(blob).hexdigest()}\n")
    (out / "Packages").write_text("\n".join(stanzas))


def work_dir() -> Path:
    """A private directory for one unpacked root: in RAM (/dev/shm) when it has room, where
    unpacking, dpkg's many fsyncs and the clean-up cost next to nothing (on this machine's disk
    they took 50 s of a busy machine; in RAM 13 s), else under the cache directory."""
    shm = Path("/dev/shm")
    try:
        usage = shutil.disk_usage(shm)
        if os.access(shm, os.W_OK) and usage.free >= 3 << 30:
            return Path(tempfile.mkdtemp(prefix="pi-root-", dir=shm))
    except OSError:
        pass
    CACHE.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="pi-root-", dir=CACHE))


def unpack_root(tarball: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(into)], check=True, timeout=300)


def in_root(root: Path, script: str, *, binds: dict[str, Path] | None = None,
            env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run a bash `script` chrooted into `root`, in a private mount namespace (so /dev, /proc
    and the cache binds vanish with the process, whatever happens)."""
    mounts = [f"mount --bind /dev {root}/dev", f"mount -t proc proc {root}/proc"]
    for inside, outside in (binds or {}).items():
        target = root / inside.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        mounts.append(f"mount --bind {outside} {target}")
    shutil.copyfile("/etc/resolv.conf", root / "etc/resolv.conf")
    inner_env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                 "HOME": "/root", "LANG": "C.UTF-8", **(env or {})}
    env_args = " ".join(f"{k}={_quote(v)}" for k, v in inner_env.items())
    outer = " && ".join(mounts) + f" && exec chroot {root} env -i {env_args} bash -c {_quote(script)}"
    # its own session: whatever stops the wait (its timeout, the test's), the whole tree inside
    # the root (apt, dpkg, pip) is killed with it, not only `unshare`
    proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", outer],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def copy_checkout(into: Path) -> None:
    """The repository as a fresh clone would have it (tracked and new files, no venv)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True, text=True).stdout.split()
    for name in listed:
        source = REPO / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
