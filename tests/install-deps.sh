#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages named as arguments that are missing: as root
# with apt-get, otherwise say exactly what to run.
#
# With --npm DIR: install DIR's npm packages (npm ci, from its
# package-lock.json) when DIR/node_modules is missing or older than the
# lock file.  Without npm, or when npm ci fails, say so and go on: the
# tests that need the packages skip, naming what is missing.
if [ "$1" = --npm ]; then
	dir=$2
	stamp=$dir/node_modules/.package-lock.json
	[ -f "$stamp" ] && [ ! "$dir/package-lock.json" -nt "$stamp" ] && exit 0
	if ! command -v npm >/dev/null 2>&1; then
		echo "npm is missing: the tests in $dir will skip (install the Debian package npm)" >&2
		exit 0
	fi
	echo "  NPM     $dir"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
		echo "npm ci failed in $dir: the tests that need its packages will skip" >&2
	exit 0
fi
missing=
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "stackpulse needs these packages:$missing" >&2
	echo "install them with: sudo apt-get install$missing" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q $missing >/dev/null 2>&1 || {
	apt-get update -q >/dev/null 2>&1
	apt-get install -y -q $missing
}
