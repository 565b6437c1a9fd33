#!/usr/bin/env bash
# Prints the path of a Chromium for the kubectl plugin's browser test (the contact sheet is opened
# in headless Chromium), installing Debian's chromium first when there is none and it can.
# Progress goes to stderr; the only thing on stdout is the path. make test and
# make plugin-screenshot call it, so a fresh clone needs no set-up step of its own.
#
# Order:
#   1. $CHROMIUM, when it names an executable;
#   2. chromium, chromium-browser, google-chrome or google-chrome-stable on the PATH;
#   3. apt-get install chromium, when apt-get is there and we are root (apt-get update once);
#   4. otherwise fail, saying exactly what to install (or, with KUBECTL_VIDEO_SKIP_BROWSER=1,
#      print nothing and let the browser test skip itself).
set -euo pipefail

say() { printf 'chromium: %s\n' "$*" >&2; }

find_chromium() {
  if [ -n "${CHROMIUM:-}" ]; then
    if [ -x "$CHROMIUM" ]; then
      echo "$CHROMIUM"
      return 0
    fi
    # A wrong $CHROMIUM is a mistake to report, not to paper over with another browser.
    say "\$CHROMIUM is set to '$CHROMIUM', which is not an executable file"
    exit 1
  fi
  local name
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

if find_chromium; then
  exit 0
fi
if [ "${KUBECTL_VIDEO_SKIP_BROWSER:-}" = 1 ]; then
  say "none found and KUBECTL_VIDEO_SKIP_BROWSER=1: the browser test will be skipped"
  exit 0
fi

how="install Debian's chromium (sudo apt-get install chromium), or another Chromium or Google Chrome, \
or set CHROMIUM to a Chromium binary; KUBECTL_VIDEO_SKIP_BROWSER=1 skips the browser test instead"

if ! command -v apt-get >/dev/null 2>&1; then
  say "no Chromium found and no apt-get to install one: $how"
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  say "no Chromium found, and installing one with apt-get needs root: $how"
  exit 1
fi

say "no Chromium found: installing Debian's chromium with apt-get (once per machine)"
# Other processes may hold the dpkg lock for a while (unattended upgrades, a parallel install):
# wait for it rather than fail at once.
# apt-get's hundreds of lines go to a log, shown only when it fails.
apt_opts=(-o DPkg::Lock::Timeout=600 -qq)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! apt-get "${apt_opts[@]}" update >"$log" 2>&1 ||
  ! DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y chromium >>"$log" 2>&1; then
  tail -n 30 "$log" >&2
  say "apt-get could not install chromium: $how"
  exit 1
fi
say "installed Debian's chromium $(dpkg-query -W -f='${Version}' chromium 2>/dev/null || true)"

if find_chromium; then
  exit 0
fi
say "apt-get installed chromium but it is not on the PATH: $how"
exit 1
