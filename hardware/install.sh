#!/usr/bin/env bash
# Install Table Referee on Raspberry Pi OS Bookworm (or Debian Bookworm), from this checkout.
#
#   sudo hardware/install.sh              # install, enable and (re)start the service
#   sudo hardware/install.sh --no-service # everything but the systemd steps (image builds, chroots)
#   hardware/install.sh --dry-run         # print what would be done, change nothing
#
# Safe to run again: after a `git pull` it reinstalls the code and restarts the service. It never
# overwrites an existing /etc/table-referee/config.toml.
set -euo pipefail

readonly PREFIX=/opt/table-referee
readonly VENV="$PREFIX/venv"
readonly CONF_DIR=/etc/table-referee
readonly CONF="$CONF_DIR/config.toml"
readonly STATE_DIR=/var/lib/table-referee
readonly SERVICE=table-referee
readonly ACCOUNT=referee
readonly EXTRAS="pi,audio"
readonly PACKAGES=(python3-venv python3-lgpio espeak-ng libportaudio2 alsa-utils)
# Only tests point this elsewhere, to see the refusal on other systems.
readonly OS_RELEASE="${TABLE_REFEREE_OS_RELEASE:-/etc/os-release}"

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly REPO
DRY_RUN=0
WITH_SERVICE=1

say() { printf '==> %s\n' "$*"; }
warn() { printf 'install.sh: warning: %s\n' "$*" >&2; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

# run CMD...: do it, or only show it with --dry-run.
run() {
    if ((DRY_RUN)); then
        printf '   +'
        printf ' %q' "$@"
        printf '\n'
    else
        "$@"
    fi
}

usage() {
    cat <<'EOF'
Usage: sudo hardware/install.sh [--no-service] [--dry-run]

Installs Table Referee on Raspberry Pi OS Bookworm:
  system packages  python3-venv python3-lgpio espeak-ng libportaudio2 alsa-utils
  user             referee (groups gpio, audio), home /var/lib/table-referee
  code             /opt/table-referee/venv (sees the system's python3-lgpio)
  config           /etc/table-referee/config.toml, only if absent (a random table PIN)
  service          table-referee.service, enabled and started

  --no-service  skip the systemd unit (for chroots, containers and image builds)
  --dry-run     print the steps without changing anything
  -h, --help    this text
EOF
}

parse_args() {
    while (($#)); do
        case "$1" in
            --no-service) WITH_SERVICE=0 ;;
            --dry-run) DRY_RUN=1 ;;
            -h | --help) usage; exit 0 ;;
            *) printf "install.sh: unknown option '%s'; see --help\n" "$1" >&2; exit 2 ;;
        esac
        shift
    done
}

check_system() {
    [[ -r "$OS_RELEASE" ]] || die "cannot read $OS_RELEASE; this installer is for Raspberry Pi OS Bookworm"
    local id="" id_like="" codename="" pretty=""
    # shellcheck disable=SC1090,SC1091
    id="$(. "$OS_RELEASE" && printf '%s' "${ID:-}")"
    # shellcheck disable=SC1090,SC1091
    id_like="$(. "$OS_RELEASE" && printf '%s' "${ID_LIKE:-}")"
    # shellcheck disable=SC1090,SC1091
    codename="$(. "$OS_RELEASE" && printf '%s' "${VERSION_CODENAME:-}")"
    # shellcheck disable=SC1090,SC1091
    pretty="$(. "$OS_RELEASE" && printf '%s' "${PRETTY_NAME:-unknown}")"
    if [[ "$id" != debian && "$id" != raspbian && " $id_like " != *" debian "* ]]; then
        die "sorry, this installer is for Raspberry Pi OS / Debian Bookworm and this is $pretty.
Install by hand instead: see hardware/README.md (a venv, pip install '.[pi]', the service file)."
    fi
    if [[ "$codename" != bookworm ]]; then
        warn "this is $pretty, not Bookworm; carrying on, but only Bookworm is tested"
    fi
    if ((!DRY_RUN)) && ((EUID != 0)); then
        die "run as root: sudo $0"
    fi
    command -v apt-get >/dev/null || die "apt-get not found; this installer needs a Debian system"
    [[ -f "$REPO/pyproject.toml" ]] || die "no pyproject.toml in $REPO; run the script from a checkout of the repository"
    if ! grep -qs 'Raspberry Pi' /proc/device-tree/model; then
        warn "this is not a Raspberry Pi: installing anyway; without GPIO, run the referee with --mock"
    fi
}

# Is PACKAGE installable from the configured archives?
has_candidate() {
    local candidate
    candidate="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
    [[ -n "$candidate" && "$candidate" != "(none)" ]]
}

is_installed() {
    local status
    status="$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]]
}

install_packages() {
    say "system packages"
    run apt-get update -q
    local wanted=() missing_lgpio=0 pkg
    for pkg in "${PACKAGES[@]}"; do
        if has_candidate "$pkg"; then
            wanted+=("$pkg")
        elif [[ "$pkg" == python3-lgpio ]]; then
            missing_lgpio=1
        elif ((DRY_RUN)); then
            wanted+=("$pkg")
        else
            die "package $pkg is not available from this system's archives; check /etc/apt/sources.list(.d)"
        fi
    done
    # The pi extra also lists RPi.GPIO (for older Pis; it does not work on a Pi 5). Let apt provide
    # it when it can, so pip need not compile it; never fight the rpi-lgpio replacement.
    if has_candidate python3-rpi.gpio && ! is_installed python3-rpi.gpio \
        && ! is_installed python3-rpi-lgpio; then
        wanted+=(python3-rpi.gpio)
    fi
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${wanted[@]}"
    if ((missing_lgpio)); then
        warn "python3-lgpio is not in this system's archives (it comes from the Raspberry Pi OS archive).
         On a Raspberry Pi, use Raspberry Pi OS or add its archive, then run this script again;
         without lgpio the referee cannot read the buttons on a Pi 5 (use --mock elsewhere)."
    fi
}

create_account() {
    say "user $ACCOUNT"
    local group
    for group in gpio audio; do
        if ! getent group "$group" >/dev/null; then
            # Raspberry Pi OS has a gpio group owning /dev/gpiochip*; elsewhere create it so the
            # service's SupplementaryGroups= resolves.
            run groupadd --system "$group"
        fi
    done
    if ! getent passwd "$ACCOUNT" >/dev/null; then
        run useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
            --shell /usr/sbin/nologin --comment "Table Referee" "$ACCOUNT"
    fi
    run usermod --append --groups gpio,audio "$ACCOUNT"
    run install -d -o "$ACCOUNT" -g "$ACCOUNT" -m 0750 "$STATE_DIR"
}

install_code() {
    say "code in $VENV"
    run install -d -m 0755 "$PREFIX"
    local cfg="$VENV/pyvenv.cfg"
    if [[ -f "$cfg" ]] && ! grep -qs '^include-system-site-packages = true' "$cfg"; then
        warn "$VENV cannot see the system's python3-lgpio; making it again"
        run rm -rf "$VENV"
    fi
    if [[ ! -x "$VENV/bin/python" ]] || ((DRY_RUN)); then
        run python3 -m venv --system-site-packages "$VENV"
    fi
    run "$VENV/bin/python" -m pip install --quiet --upgrade pip
    # pip builds the wheel out of tree and always reinstalls a local project, so a re-run after
    # `git pull` picks up the new code; dependencies are only upgraded when needed.
    run "$VENV/bin/python" -m pip install --quiet --upgrade "${REPO}[${EXTRAS}]"
    run install -m 0644 "$REPO/wiring.md" "$PREFIX/wiring.md"
    run ln -sfn "$VENV/bin/referee" /usr/local/bin/referee
    if ((!DRY_RUN)); then
        "$VENV/bin/python" -c 'import referee' || die "the referee package did not import from $VENV"
        if "$VENV/bin/python" -c 'import lgpio' 2>/dev/null; then
            say "lgpio is visible from the venv"
        else
            warn "lgpio is not importable from $VENV: the referee will need --mock (see above)"
        fi
    fi
}

install_config() {
    say "config $CONF"
    run install -d -m 0755 "$CONF_DIR"
    if [[ -e "$CONF" ]]; then
        say "keeping the existing $CONF"
        return
    fi
    local pin
    pin="$(printf '%06d' "$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 ))")"  # 6 random digits
    run install -m 0640 -o root -g "$ACCOUNT" "$REPO/hardware/config.example.toml" "$CONF"
    run sed -i "s/^pin = \"4321\"/pin = \"$pin\"/" "$CONF"
    say "table PIN: $pin (in $CONF; the scoreboard asks for it before changing a game)"
}

install_service() {
    if ((!WITH_SERVICE)); then
        say "service: skipped (--no-service)"
        return
    fi
    say "service $SERVICE"
    run install -m 0644 "$REPO/hardware/$SERVICE.service" "/etc/systemd/system/$SERVICE.service"
    if ! command -v systemctl >/dev/null; then
        warn "systemctl not found: the unit is installed but not enabled"
        return
    fi
    if [[ ! -d /run/systemd/system ]]; then
        # A chroot or container without systemd running: enable works offline, start cannot.
        run systemctl enable "$SERVICE"
        say "systemd is not running here: the service starts at the next boot"
        return
    fi
    run systemctl daemon-reload
    run systemctl enable "$SERVICE"
    run systemctl restart "$SERVICE"
    say "started; check it with: systemctl status $SERVICE"
}

main() {
    parse_args "$@"
    ((DRY_RUN)) && say "dry run: nothing will be changed"
    check_system
    install_packages
    create_account
    install_code
    install_config
    install_service
    say "done. Check the box: see 'Check the box' in $PREFIX/wiring.md (referee doctor, referee buttons)"
}

main "$@"
