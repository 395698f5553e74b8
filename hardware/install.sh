#!/usr/bin/env bash
# Install Table Referee on Raspberry Pi OS Bookworm (or Debian Bookworm), from this checkout.
#
#   sudo hardware/install.sh              # install, enable and (re)start the service
#   sudo hardware/install.sh --no-service # everything but the systemd steps (image builds, chroots)
#   sudo hardware/install.sh --sound-card "USB Audio Device"   # choose the card without asking
#   sudo hardware/install.sh --voice en_US-lessac-medium        # a natural Piper voice, fetched now
#   hardware/install.sh --dry-run         # print what would be done, change nothing
#
# Safe to run again: after a `git pull` it reinstalls the code and restarts the service. It never
# overwrites an existing /etc/table-referee/config.toml.
#
# Nothing is compiled. GPIO comes from Raspberry Pi OS's own python3-lgpio (seen by the venv
# through --system-site-packages); RPi.GPIO is never installed (it has no aarch64 wheel, its
# edge detection fails on 6.6 kernels and it does not run on a Pi 5), and pip only takes wheels.
set -euo pipefail

readonly PREFIX=/opt/table-referee
readonly VENV="$PREFIX/venv"
readonly CONF_DIR=/etc/table-referee
readonly CONF="$CONF_DIR/config.toml"
readonly STATE_DIR=/var/lib/table-referee
readonly SERVICE=table-referee
readonly ACCOUNT=referee
readonly VOICES_DIR="$STATE_DIR/voices"
readonly PACKAGES=(python3-venv python3-lgpio espeak-ng libportaudio2 alsa-utils)
# Only tests point these elsewhere (another system; a Pi's sound cards in a chroot).
readonly OS_RELEASE="${TABLE_REFEREE_OS_RELEASE:-/etc/os-release}"
readonly ASOUND_CARDS="${TABLE_REFEREE_ASOUND_CARDS:-/proc/asound/cards}"
# dpkg's architecture (tests give another, as they give another os-release)
ARCH="${TABLE_REFEREE_ARCH:-$(dpkg --print-architecture 2>/dev/null || uname -m)}"
readonly ARCH
readonly ASOUND_CONF=/etc/asound.conf
readonly ASOUND_MARK="# Written by Table Referee's install.sh"

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly REPO
DRY_RUN=0
WITH_SERVICE=1
SOUND_CARD=""
VOICE=""
EXTRAS="audio"

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
Usage: sudo hardware/install.sh [--no-service] [--sound-card NAME|none] [--voice NAME] [--dry-run]

Installs Table Referee on Raspberry Pi OS Bookworm:
  system packages  python3-venv python3-lgpio espeak-ng libportaudio2 alsa-utils
  user             referee (groups gpio, audio), home /var/lib/table-referee
  code             /opt/table-referee/venv (sees the system's python3-lgpio; wheels only)
  config           /etc/table-referee/config.toml, only if absent (a random table PIN)
  sound card       when ALSA's default is HDMI and another card is there (a Pi 5 or Zero 2 W
                   with a USB speaker), offers that card: /etc/asound.conf and [speech] device
  service          table-referee.service, enabled and started

  --no-service        skip the systemd unit (for chroots, containers and image builds)
  --sound-card NAME   use this card (part of its name) without asking; "none" keeps ALSA's
  --voice NAME        speak with the Piper voice NAME (like en_US-lessac-medium): installs
                      Piper (the voice extra, with the English en_US-joe-medium), fetches
                      NAME into /var/lib/table-referee/voices with Piper's own downloader now,
                      while online (never at run time), and sets [speech] voice to it
  --dry-run           print the steps without changing anything
  -h, --help          this text
EOF
}

parse_args() {
    while (($#)); do
        case "$1" in
            --no-service) WITH_SERVICE=0 ;;
            --dry-run) DRY_RUN=1 ;;
            --sound-card)
                (($# >= 2)) || { printf 'install.sh: --sound-card needs a name (or none)\n' >&2; exit 2; }
                SOUND_CARD="$2"
                shift ;;
            --voice)
                (($# >= 2)) || { printf 'install.sh: --voice needs a Piper voice name, like en_US-lessac-medium\n' >&2; exit 2; }
                [[ "$2" =~ ^[a-z]{2,3}_[A-Z]{2}-[A-Za-z0-9_]+-(x_low|low|medium|high)$ ]] || {
                    printf "install.sh: --voice '%s' is not a Piper voice name: give language_REGION-name-quality, like en_US-lessac-medium or de_DE-thorsten-medium\n" "$2" >&2
                    exit 2
                }
                VOICE="$2"
                EXTRAS="audio,voice"
                shift ;;
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
    # 32-bit Raspberry Pi OS: PyPI has no armv7l wheels for numpy, msgspec or cffi, and this
    # installer compiles nothing; refused before anything is installed
    case "$ARCH" in
        arm64 | aarch64 | amd64 | x86_64) ;;
        *) die "this system is $ARCH (32-bit): the referee needs 64-bit Raspberry Pi OS (numpy, msgspec and cffi have no $ARCH wheels, and nothing is compiled here); flash Raspberry Pi OS Lite (64-bit), which a Zero 2 W, Pi 3, 4 and 5 all run, then run this again" ;;
    esac
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
    local all=1 pkg
    for pkg in "${PACKAGES[@]}"; do
        is_installed "$pkg" || all=0
    done
    if ((all)) && ((!DRY_RUN)); then  # a re-run, perhaps offline: nothing to fetch
        say "all installed already"
        return
    fi
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
    # Wheels only: a dependency without a wheel for this Pi is an error here, never a compile
    # (Raspberry Pi OS has no python3-dev). pip always rebuilds a local project (pure Python,
    # nothing compiled), so a re-run after `git pull` picks up the new code.
    # The build backend lives in the venv and pip builds without isolation, so a re-run with no
    # network (a box at a party) needs no index: isolation fetched hatchling every time.
    if ((DRY_RUN)) || ! "$VENV/bin/python" -c 'import hatchling' 2>/dev/null; then
        run "$VENV/bin/python" -m pip install --quiet --only-binary=:all: hatchling
    fi
    run "$VENV/bin/python" -m pip install --quiet --only-binary=:all: --no-build-isolation \
        "${REPO}[${EXTRAS}]"
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

# The cards the kernel knows, as "index<TAB>id<TAB>name" (from /proc/asound/cards).
sound_cards() {
    [[ -r "$ASOUND_CARDS" ]] || return 0
    sed -nE 's/^ *([0-9]+) \[([^] ]+) *\]: .* - (.*)$/\1\t\2\t\3/p' "$ASOUND_CARDS"
}

# A Pi 5 (and a Zero 2 W) has only HDMI built in, so ALSA's default is HDMI even with a USB
# speaker plugged in; raspi-config writes its choice to the login user's ~/.asoundrc, which the
# service user never reads. So the choice goes where everyone reads it: /etc/asound.conf (by
# card id, which survives renumbering) and [speech] device in the referee's config.
choose_sound_card() {
    say "sound card"
    local cards default_name="" pick="" idx id name
    cards="$(sound_cards)"
    if [[ -z "$cards" ]]; then
        say "no sound card seen yet (a USB speaker can be plugged in later; the referee waits for it)"
        return
    fi
    if [[ -f "$ASOUND_CONF" ]] && ! grep -qF "$ASOUND_MARK" "$ASOUND_CONF"; then
        say "keeping your own $ASOUND_CONF"
        return
    fi
    default_name="$(printf '%s\n' "$cards" | awk -F '\t' '$1 == 0 {print $3}')"
    if [[ "$SOUND_CARD" == none ]]; then
        return
    elif [[ -n "$SOUND_CARD" ]]; then
        pick="$(printf '%s\n' "$cards" | awk -F '\t' -v want="$SOUND_CARD" \
            'index(tolower($3), tolower(want)) || tolower($2) == tolower(want) {print; exit}')"
        [[ -n "$pick" ]] || die "no sound card matches '$SOUND_CARD'; cards: $(printf '%s\n' "$cards" | cut -f3 | paste -sd, -)"
    elif [[ "${default_name,,}" == *hdmi* ]]; then
        pick="$(printf '%s\n' "$cards" | awk -F '\t' 'tolower($3) !~ /hdmi/ {print; exit}')"
        if [[ -n "$pick" && -t 0 ]]; then
            IFS=$'\t' read -r idx id name <<<"$pick"
            local answer=""
            read -r -p "ALSA's default sound card is HDMI ($default_name). Use '$name' for the referee? [Y/n] " answer || true
            [[ "${answer,,}" == n* ]] && pick=""
        fi
    fi
    if [[ -z "$pick" ]]; then
        say "sound: ALSA's default card ($default_name)"
        return
    fi
    IFS=$'\t' read -r idx id name <<<"$pick"
    say "sound: card $idx '$name' for everyone ($ASOUND_CONF) and for the referee ([speech] device)"
    if ((DRY_RUN)); then
        printf '   + write %s (defaults.pcm.card %s) and device = "%s" in %s\n' "$ASOUND_CONF" "$id" "$name" "$CONF"
        return
    fi
    printf '%s\ndefaults.pcm.card "%s"\ndefaults.ctl.card "%s"\n' "$ASOUND_MARK" "$id" "$id" >"$ASOUND_CONF"
    REFEREE_SOUND_CARD="$name" REFEREE_CONF="$CONF" "$VENV/bin/python" - <<'PY'
import os
import tomllib
from referee.config import set_config_value

conf = os.environ["REFEREE_CONF"]
with open(conf, "rb") as f:
    speech = tomllib.load(f).get("speech", {})
if "device" not in speech:
    set_config_value(conf, "speech", "device", os.environ["REFEREE_SOUND_CARD"])
PY
}

# --voice NAME: Piper's own downloader fetches the model and its .json beside it, now (the
# referee never downloads at run time), into the service's state; [speech] voice names the file.
install_voice() {
    [[ -n "$VOICE" ]] || return 0
    say "voice $VOICE in $VOICES_DIR"
    run install -d -o "$ACCOUNT" -g "$ACCOUNT" -m 0755 "$VOICES_DIR"
    local model="$VOICES_DIR/$VOICE.onnx"
    if ((DRY_RUN)); then
        run "$VENV/bin/python" -m piper.download_voices --download-dir "$VOICES_DIR" "$VOICE"
        printf '   + write voice = "piper:%s" under [speech] in %s\n' "$model" "$CONF"
        return
    fi
    "$VENV/bin/python" -m piper.download_voices --download-dir "$VOICES_DIR" "$VOICE" ||
        die "could not fetch the Piper voice $VOICE (no network, or no such voice): run install.sh --voice $VOICE again while online; the referee speaks with espeak-ng meanwhile"
    [[ -s "$model" && -s "$model.json" ]] || die "the Piper voice $VOICE was not fetched whole ($model); run install.sh --voice $VOICE again while online"
    chown "$ACCOUNT:$ACCOUNT" "$model" "$model.json"
    REFEREE_VOICE="piper:$model" REFEREE_CONF="$CONF" "$VENV/bin/python" - <<'PY'
import os
from referee.config import set_config_value

set_config_value(os.environ["REFEREE_CONF"], "speech", "voice", os.environ["REFEREE_VOICE"])
PY
    say "voice: Piper $VOICE ([speech] voice in $CONF); referee doctor checks it speaks"
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
    choose_sound_card
    install_voice
    install_service
    say "done. Check the box: see 'Check the box' in $PREFIX/wiring.md (referee doctor, referee buttons)"
}

main "$@"
