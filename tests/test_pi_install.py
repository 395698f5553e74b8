"""hardware/install.sh in a clean Debian bookworm root that looks like Raspberry Pi OS Lite.

The root is debootstrap's minbase with systemd (tests/debroot.py, cached), plus a local apt
repository standing in for the Raspberry Pi archive: ``python3-lgpio`` and ``python3-rpi-lgpio``
by those names, and no ``python3-rpi.gpio``. Fake compilers that log and fail stand first on
the PATH, so anything that tries to compile is caught. A Pi 5's /proc/asound/cards with a USB
speaker is handed to the installer. Then: the install finishes, nothing was compiled, lgpio is
the apt one seen through the venv, RPi.GPIO was never installed, the sound card was written by
name, and ``systemd-analyze verify`` accepts the unit as installed.

Needs root (chroot, mounts) and a Debian mirror the first time; the root, the .debs and the
wheels are cached under ``$TMPDIR/table-referee-test-cache`` afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests import debroot

# The install (apt from a mirror, dpkg, pip into a venv) takes about 13 s here when the machine is
# idle and over a minute beside two busy processes: it gets its own bound, not the suite's 60 s.
pytestmark = pytest.mark.timeout(600)

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("debootstrap") is None or shutil.which("unshare") is None,
    reason="needs root, debootstrap and unshare (make test installs debootstrap)")

PI5_CARDS = """\
 0 [vc4hdmi0       ]: vc4-hdmi - vc4-hdmi-0
                      vc4-hdmi-0
 1 [vc4hdmi1       ]: vc4-hdmi - vc4-hdmi-1
                      vc4-hdmi-1
 2 [Device         ]: USB-Audio - USB Audio Device
                      GeneralPlus USB Audio Device at usb-xhci-hcd.0-1, full speed
"""

COMPILERS = ("cc", "gcc", "c++", "g++", "x86_64-linux-gnu-gcc", "aarch64-linux-gnu-gcc", "ld",
             "swig", "make")


@pytest.fixture(scope="module")
def installed() -> object:
    tarball, wheels = debroot.bookworm_tarball(), debroot.wheelhouse()
    work = debroot.work_dir()
    root = work / "root"
    try:
        debroot.unpack_root(tarball, root)
        debroot.standin_repo(root / "srv/rpi-archive")
        (root / "etc/apt/sources.list.d/raspi.list").write_text(
            "deb [trusted=yes] file:/srv/rpi-archive ./\n")
        for name in COMPILERS:
            tool = root / "usr/local/bin" / name
            tool.write_text(f'#!/bin/sh\necho "{name} $*" >> /var/log/compiler-calls\nexit 1\n')
            tool.chmod(0o755)
        (root / "var/log/compiler-calls").write_text("")
        (root / "srv/asound-cards").write_text(PI5_CARDS)
        debroot.copy_checkout(root / "srv/table-referee")
        # the .deb cache is shared by every checkout on this machine, and apt-get locks the
        # directory it downloads to ("Could not get lock /var/cache/apt/archives/lock"): each run
        # installs from its own copy of it (hard links) and hands back what it downloaded, so
        # runs wait for each other only while copying, not for a whole install
        archives = debroot.CACHE / "apt-archives"
        own = work / "apt-archives"
        with debroot.locked("apt-archives"):
            (archives / "partial").mkdir(parents=True, exist_ok=True)
            debroot.link_tree(archives, own, "*.deb")
        (own / "partial").mkdir(parents=True, exist_ok=True)
        binds = {"/var/cache/apt/archives": own, "/srv/wheels": wheels}
        env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/srv/wheels",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               "TABLE_REFEREE_ASOUND_CARDS": "/srv/asound-cards"}
        run = debroot.in_root(root, "bash /srv/table-referee/hardware/install.sh",
                              binds=binds, env=env, timeout=900)
        after = debroot.in_root(root, CHECKS, binds=binds, timeout=300)
        with debroot.locked("apt-archives", wait=False) as free:
            if free:  # (it is a cache: another run holding it may add them next time)
                debroot.link_tree(own, archives, "*.deb")
        yield root, run, after
    finally:
        shutil.rmtree(work, ignore_errors=True)


PY = "/opt/table-referee/venv/bin/python"
LOAD = ("from referee.config import load_config; c = load_config('/etc/table-referee/config.toml'); "
        "print(c.speech['device'], len(c.pin or ''))")
CHECKS = "PY=" + PY + "\nLOAD=\"" + LOAD + "\"\n" + r"""
echo "compiled: $(cat /var/log/compiler-calls | tr '\n' ';')"
for p in python3-lgpio python3-rpi.gpio python3-dev; do
  echo "package $p: $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || echo absent)"
done
echo "lgpio from: $(cd /var/lib/table-referee && $PY -c 'import lgpio; print(lgpio.__file__, lgpio.STANDIN)')"
echo "RPi.GPIO importable: $($PY -c 'import RPi.GPIO' 2>/dev/null && echo yes || echo no)"
said="$(systemd-analyze verify /etc/systemd/system/table-referee.service 2>&1)"; rc=$?
echo "verify: [$(printf '%s' "$said" | tr '\n' ';')] rc=$rc"
echo "enabled: $(readlink /etc/systemd/system/multi-user.target.wants/table-referee.service)"
echo "asound: $(tr '\n' ';' < /etc/asound.conf)"
echo "device: $(grep '^device' /etc/table-referee/config.toml)"
echo "version: $(cd / && runuser -u referee -- /usr/local/bin/referee --version 2>&1)"
echo "config: $(cd / && runuser -u referee -- $PY -c "$LOAD" 2>&1)"
"""


def facts(after: object) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in after.stdout.splitlines():  # type: ignore[attr-defined]
        key, _, value = line.partition(": ")
        out[key] = value
    return out


@needs_root
def test_install_finishes_on_stock_bookworm_with_rpi_os_packages(installed) -> None:
    _, run, _ = installed
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "lgpio is visible from the venv" in run.stdout


@needs_root
def test_nothing_is_compiled_and_rpi_gpio_stays_out(installed) -> None:
    _, run, after = installed
    got = facts(after)
    assert got["compiled"] == "", got
    assert got["package python3-lgpio"] == "install ok installed"
    assert "installed" not in got["package python3-rpi.gpio"].replace("not-installed", "")
    assert "installed" not in got["package python3-dev"].replace("not-installed", "")
    assert got["lgpio from"] == "/usr/lib/python3/dist-packages/lgpio.py True"
    assert got["RPi.GPIO importable"] == "no"


@needs_root
def test_the_unit_validates_and_is_enabled(installed) -> None:
    _, _, after = installed
    got = facts(after)
    assert got["verify"] == "[] rc=0", got["verify"]
    assert got["enabled"] == "/etc/systemd/system/table-referee.service"


@needs_root
def test_the_usb_speaker_is_chosen_by_name_for_everyone(installed) -> None:
    _, run, after = installed
    got = facts(after)
    assert 'defaults.pcm.card "Device"' in got["asound"]
    assert got["device"] == 'device = "USB Audio Device"'
    assert got["config"] == "USB Audio Device 6"  # loads, with the random 6-digit PIN
    assert got["version"].startswith("referee ")


def test_pip_is_never_asked_for_a_gpio_library_it_would_have_to_compile() -> None:
    """RPi.GPIO and PyPI's lgpio have no aarch64 wheels: on a Pi pip compiled them (and failed
    without python3-dev). GPIO comes from apt; pip takes wheels only."""
    import tomllib

    data = tomllib.loads((debroot.REPO / "pyproject.toml").read_text())
    extras = data["project"]["optional-dependencies"]
    assert not [r for r in extras["pi"] if "gpio" in r.lower()]
    script = (debroot.REPO / "hardware/install.sh").read_text()
    assert "--only-binary=:all:" in script and "python3-rpi.gpio" not in script


@needs_root
def test_a_re_run_with_no_network_needs_no_index(installed) -> None:
    """A box at a party re-runs install.sh (after a git pull from a laptop, say) with no
    network: the packages are there (apt is not asked), and pip builds the project with the
    venv's own hatchling (no build isolation, which fetched hatchling from the index)."""
    root, first, _ = installed
    assert first.returncode == 0
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/srv/no-wheels",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "TABLE_REFEREE_ASOUND_CARDS": "/srv/asound-cards"}
    (root / "srv/no-wheels").mkdir(exist_ok=True)
    again = debroot.in_root(root, "bash /srv/table-referee/hardware/install.sh", env=env,
                            timeout=600)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "all installed already" in again.stdout


def test_a_32_bit_system_is_refused_in_one_line_before_anything_is_installed() -> None:
    """armhf (32-bit Raspberry Pi OS on a Zero 2 W, Pi 3 or 4): PyPI has no armv7l wheels for
    numpy, msgspec or cffi, and the installer compiles nothing, so it refuses at once."""
    env = {**os.environ, "TABLE_REFEREE_ARCH": "armhf"}
    done = subprocess.run(["bash", str(debroot.REPO / "hardware" / "install.sh"), "--dry-run"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("install.sh: this system is armhf (32-bit): the referee needs 64-bit "
                           "Raspberry Pi OS") and "flash Raspberry Pi OS Lite (64-bit)" in line
    assert done.stdout.splitlines() == ["==> dry run: nothing will be changed"]  # nothing else


def test_a_piper_voice_is_fetched_at_install_with_pipers_own_downloader() -> None:
    """`--voice NAME` installs Piper (the voice extra), fetches NAME into the service's state with
    Piper's own downloader while the installer runs (online), and points [speech] voice at it;
    a name that is no Piper voice is refused in one line, before anything is done."""
    script = str(debroot.REPO / "hardware" / "install.sh")
    env = {**os.environ, "TABLE_REFEREE_ARCH": "arm64"}
    done = subprocess.run(["bash", script, "--dry-run", "--voice", "de_DE-thorsten-medium"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    steps = done.stdout.splitlines()
    pip = next(line for line in steps if "--no-build-isolation" in line)
    assert pip.endswith(r"\[audio\,voice\]")
    fetch = steps.index("   + /opt/table-referee/venv/bin/python -m piper.download_voices "
                        "--download-dir /var/lib/table-referee/voices de_DE-thorsten-medium")
    assert steps.index(pip) < fetch  # Piper is installed before it fetches
    assert steps[fetch + 1] == ('   + write voice = "piper:/var/lib/table-referee/voices/'
                                'de_DE-thorsten-medium.onnx" under [speech] in '
                                '/etc/table-referee/config.toml')
    plain = subprocess.run(["bash", script, "--dry-run"], env=env, capture_output=True, text=True,
                           timeout=60)
    assert "download_voices" not in plain.stdout and r"\[audio\]" in plain.stdout
    for bad in (["--voice", "thorsten"], ["--voice", "de_DE-thorsten-medium; rm -rf /"],
                ["--voice"]):
        refused = subprocess.run(["bash", script, "--dry-run", *bad], env=env,
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and refused.stdout == ""
        (line,) = refused.stderr.splitlines()
        assert line.startswith("install.sh: --voice") and "en_US-lessac-medium" in line
