# shellcheck shell=bash
# haproxy: the load balancer the replica tests put in front of several
# toolwarden processes. Sourced by scripts/services, which sets ROOT and
# SERVICES_DIR.
#
# Nothing runs as a service: `up` installs the Debian package haproxy once
# (apt-get) and each test starts its own haproxy process with a config
# generated from configs/examples/haproxy.cfg. `env` names the binary.

haproxy_bin() { command -v haproxy 2>/dev/null || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; }; }

haproxy_up() {
	haproxy_bin >/dev/null && return 0
	command -v apt-get >/dev/null || {
		echo "haproxy: needs haproxy on PATH (no apt-get to install it)" >&2
		return 1
	}
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "scripts/services: installing the Debian package haproxy" >&2
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy >&2
}

# haproxy_status reports the binary installed: there is no process to check.
haproxy_status() { haproxy_bin >/dev/null; }

haproxy_down() { :; }

haproxy_env() {
	echo "export TOOLWARDEN_TEST_HAPROXY_BIN=$(haproxy_bin || true)"
}
