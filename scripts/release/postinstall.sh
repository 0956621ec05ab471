#!/bin/sh
# Package postinst (.deb: configure [OLD-VERSION]) / %post (.rpm: 1 install, 2 upgrade).
# Never starts or enables a unit: the operator does, once the configuration is in place. On an
# upgrade, units that are running are restarted onto the new binary.
set -e
# The configuration holds tokens: readable by the agent's group, not by others.
chown root:site-agent /etc/waldur
chmod 0750 /etc/waldur
config=/etc/waldur/waldur-site-agent-config.yaml
if [ -f "$config" ] && ! su -s /bin/sh site-agent -c "test -r '$config'" >/dev/null 2>&1; then
	echo "site-agent: $config is not readable by the user site-agent; run:" >&2
	echo "  chgrp site-agent $config && chmod 0640 $config" >&2
fi
upgrade=
case "$1" in
configure) [ -n "$2" ] && upgrade=1 ;;
2) upgrade=1 ;;
esac
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
	if [ -n "$upgrade" ]; then
		systemctl try-restart site-agent.service 'site-agent@*.service' || true
	fi
fi
exit 0
