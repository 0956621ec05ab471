#!/bin/sh
# Package prerm (.deb: remove|upgrade|…) / %preun (.rpm: 0 erase, 1 upgrade): on removal,
# stops and disables the units (on an upgrade the new package restarts them instead).
set -e
case "$1" in
remove | 0) ;;
*) exit 0 ;;
esac
if [ -d /run/systemd/system ]; then
	systemctl stop site-agent.service 'site-agent@*.service' || true
fi
# What `systemctl disable` removes (it needs the unit files, which go next), for every instance.
rm -f /etc/systemd/system/*.wants/site-agent.service /etc/systemd/system/*.wants/site-agent@*.service
exit 0
