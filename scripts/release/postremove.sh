#!/bin/sh
# Package postrm (.deb: remove|purge|upgrade|…) / %postun (.rpm: 0 erase, 1 upgrade).
# Purge removes the agent's state (/var/lib/site-agent). The user and group stay, as Debian
# policy asks (files elsewhere may still belong to them); so do configuration files an
# operator put in /etc/waldur (the Python agent reads the same directory).
set -e
if [ "$1" = purge ]; then
	rm -rf /var/lib/site-agent
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
exit 0
