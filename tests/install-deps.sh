#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages named as arguments that are missing: as root
# with apt-get, otherwise say exactly what to run.
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
