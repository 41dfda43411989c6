#!/usr/bin/env bash
# Install tablectl as a systemd service (Raspberry Pi OS or Debian). docs/install.md explains it.
#
#   sudo systemd/install.sh            install, or upgrade a stopped service; start it yourself
#                                      after editing /etc/tablectl/table.toml
#   sudo systemd/install.sh --start    also stop a running service first, and start it after
#   DESTDIR=/tmp/root systemd/install.sh
#                                      only lay the files out under DESTDIR (packaging): no
#                                      virtual environment, no users, no udev, no systemctl
set -euo pipefail
# sudo keeps a caller's umask stricter than 0022 (a hardened 0027 or 0077): the virtual
# environment would be unreadable to the service user, which could not even run its check.
umask 022

SRC=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=/opt/tablectl
DESTDIR=${DESTDIR:-}
START=no

for arg in "$@"; do
    case "$arg" in
        --start) START=yes ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $arg (use --start or --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$DESTDIR" ] && [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: run as root: sudo $0 $*" >&2
    exit 1
fi

# Whatever stops the script after it stopped the service says so: the table stays stopped
# rather than start on a program half upgraded.
STOPPED=no
BUILD=
on_exit() {
    local status=$?
    if [ -n "$BUILD" ]; then rm -rf "$BUILD"; fi
    if [ "$status" -ne 0 ] && [ "$STOPPED" = yes ]; then
        echo "install.sh: the upgrade did not finish (above), and tablectl, stopped for it, is" >&2
        echo "  left stopped rather than started on a program half upgraded: mend what is named" >&2
        echo "  above, then run sudo $0 --start again" >&2
    fi
}
trap on_exit EXIT

if [ -z "$DESTDIR" ]; then
    # The daemon imports some modules only when first needed (the console's HTTP stack, for
    # one): a virtual environment upgraded under it would leave the running table with old and
    # new code mixed until it restarts. Starting counts too: a restart due at any moment
    # would take the program half upgraded.
    STATE=$(systemctl is-active tablectl 2>/dev/null || true)
    case "$STATE" in
        active|activating|deactivating|reloading|refreshing)
            if [ "$START" = no ]; then
                echo "install.sh: tablectl is $STATE: upgrading it while it runs would mix old and" >&2
                echo "  new code in the running table; nothing was changed. Either stop it after" >&2
                echo "  the round in play (sudo systemctl stop tablectl) and run this again, or," >&2
                echo "  between rounds, run sudo $0 --start, which stops it, upgrades" >&2
                echo "  and starts it again" >&2
                exit 1
            fi
            echo "Stopping tablectl ($STATE) for the upgrade"
            systemctl stop tablectl
            STOPPED=yes ;;
    esac
fi

cd "$SRC"
install -D -m 0644 systemd/tablectl.service  "$DESTDIR/etc/systemd/system/tablectl.service"
RULES=/etc/udev/rules.d/99-tablectl.rules
if [ ! -e "$DESTDIR$RULES" ]; then
    install -D -m 0644 systemd/99-tablectl.rules "$DESTDIR$RULES"
elif ! cmp -s systemd/99-tablectl.rules "$DESTDIR$RULES"; then
    # It holds this table's device ids and serial numbers (docs/install.md, "Device names"):
    # an upgrade keeps it, like table.toml; this version's rules are put beside the docs.
    echo "Kept $RULES (this table's devices); this version's rules are"
    echo "  /usr/share/doc/tablectl/99-tablectl.rules: compare them with"
    echo "  diff $RULES /usr/share/doc/tablectl/99-tablectl.rules"
fi
install -D -m 0644 systemd/99-tablectl.rules "$DESTDIR/usr/share/doc/tablectl/99-tablectl.rules"
install -D -m 0644 systemd/tablectl.sysusers "$DESTDIR/usr/lib/sysusers.d/tablectl.conf"
install -D -m 0644 systemd/tablectl.tmpfiles "$DESTDIR/usr/lib/tmpfiles.d/tablectl.conf"
# All of docs/: configuration.md points to interpretations.md and api.md, and a regulator may
# want the per-game article tables (regulations/) on the table's own machine.
for doc in docs/*.md docs/regulations/*.md docs/table.toml.example; do
    install -D -m 0644 "$doc" "$DESTDIR/usr/share/doc/tablectl/${doc#docs/}"
done
NEW_CONFIG=no
# table.toml holds the console's token hashes: its directory is root's and the service's only,
# as tablectl.tmpfiles makes it, from the start (a package made from DESTDIR ships it so).
install -d -m 0750 "$DESTDIR/etc/tablectl"
if [ ! -e "$DESTDIR/etc/tablectl/table.toml" ]; then
    # Never overwrite a table's configuration: only a first install gets the example.
    install -D -m 0640 docs/table.toml.example "$DESTDIR/etc/tablectl/table.toml"
    NEW_CONFIG=yes
elif cmp -s docs/table.toml.example "$DESTDIR/etc/tablectl/table.toml"; then
    # Still the example, left by an install that stopped half way (say pip without a
    # network): not this table's configuration yet, so it is not started.
    NEW_CONFIG=yes
fi
if [ -n "$DESTDIR" ]; then
    if [ "$NEW_CONFIG" = yes ]; then
        echo "$DESTDIR/etc/tablectl/table.toml is the example: edit it for the table"
    fi
    exit 0
fi

# The user and groups, then the directories they own.
systemd-sysusers /usr/lib/sysusers.d/tablectl.conf
systemd-tmpfiles --create /usr/lib/tmpfiles.d/tablectl.conf
chgrp tablectl /etc/tablectl/table.toml
# The service reads it through its group: a configuration put in place by hand (moved from a
# home directory, mode 0600) passed the check run as root here, and failed the unit's own at
# every start. Nobody else reads it (the console's token hashes).
chmod g+r,o-rwx /etc/tablectl/table.toml

# The program, in its own virtual environment (lgpio drives the pins on a Pi), made from the
# distribution's interpreter by its full path: sudo's secure_path puts /usr/local/bin first, where
# a Python built from source, without the distribution's optimisations, would otherwise win.
PYTHON=${PYTHON:-/usr/bin/python3}
"$PYTHON" -m venv "$PREFIX/venv"
"$PREFIX/venv/bin/pip" install --quiet --upgrade pip
# Built from a copy of the tree: pip builds in the directory it is given (build/,
# tablectl.egg-info/), which would leave root's files in the clone, where its owner's
# scripts/venv can then no longer write them, and a stale build/ to the next upgrade.
BUILD=$(mktemp -d)
tar -C "$SRC" --exclude=./.git --exclude=./.venv --exclude=./build --exclude=./dist \
    --exclude='*.egg-info' --exclude=__pycache__ --exclude=./.pytest_cache \
    --exclude=./.hypothesis --exclude=./artifacts -cf - . | tar -C "$BUILD" -xf -
"$PREFIX/venv/bin/pip" install --quiet --upgrade "${BUILD}[pi]"
ln -sf "$PREFIX/venv/bin/tablectl" /usr/local/bin/tablectl

# Stable device names for devices already plugged in.
udevadm control --reload-rules
udevadm trigger --subsystem-match=tty --subsystem-match=usb --subsystem-match=gpio
# FTDI adapters' latency timer (an attribute of the usb-serial device, not of its tty)
udevadm trigger --subsystem-match=usb-serial
# and the CPU wake-up latency device's group (a misc device, not matched above)
udevadm trigger --subsystem-match=misc --sysname-match=cpu_dma_latency

systemctl daemon-reload
systemctl enable tablectl.service
# A service this run stopped is started again, on whatever configuration it ran.
if [ "$NEW_CONFIG" = yes ] && [ "$STOPPED" = no ]; then
    echo "Installed. Edit /etc/tablectl/table.toml (it is the example), check it with"
    echo "  sudo -u tablectl tablectl config check /etc/tablectl/table.toml"
    echo "then start the table with: systemctl start tablectl"
elif [ "$START" = yes ]; then
    # As the unit's ExecStartPre runs it, as the service user (root reads what it may not),
    # from a directory it may enter.
    (cd / && runuser -u tablectl -- tablectl config check /etc/tablectl/table.toml)
    # A unit that failed its start limit (a start refused again and again, which this upgrade
    # may be what mends) refuses a start until its interval has passed: its count starts over.
    systemctl reset-failed tablectl.service
    systemctl restart tablectl.service
    systemctl --no-pager status tablectl.service || true
else
    echo "Installed. Start the table with: systemctl start tablectl"
fi
