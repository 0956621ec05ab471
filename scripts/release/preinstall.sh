#!/bin/sh
# Package preinst (.deb: install|upgrade) / %pre (.rpm: 1|2): creates the system user and group
# site-agent before the files are unpacked (/etc/waldur belongs to its group). The entry is the
# one in systemd/site-agent.sysusers.conf, which the package installs in /usr/lib/sysusers.d.
set -e
getent passwd site-agent >/dev/null 2>&1 && exit 0
home=/var/lib/site-agent
if command -v systemd-sysusers >/dev/null 2>&1; then
	echo 'u site-agent - "Waldur site agent" /var/lib/site-agent /usr/sbin/nologin' |
		systemd-sysusers --replace=/usr/lib/sysusers.d/site-agent.conf -
elif command -v adduser >/dev/null 2>&1 && adduser --help 2>&1 | grep -q -- '--system'; then
	adduser --system --group --home "$home" --no-create-home --shell /usr/sbin/nologin \
		--gecos "Waldur site agent" site-agent
else
	getent group site-agent >/dev/null 2>&1 || groupadd --system site-agent
	useradd --system --gid site-agent --home-dir "$home" --no-create-home \
		--shell /usr/sbin/nologin --comment "Waldur site agent" site-agent
fi
