#!/usr/bin/env bash
# Checks the packaging files: the man pages, the systemd unit and the
# logrotate config. Run it from the top of the checkout:
#
#   scripts/check-packaging.sh [BINDIR]
#
# BINDIR holds a built execq-worker (default: build); the unit is checked
# with @BINDIR@ pointing there, since systemd-analyze wants the binary to
# exist. groff is required; mandoc, systemd-analyze and logrotate are
# used when installed. Installs nothing, starts nothing, writes only in a
# temporary directory.
set -euo pipefail

bindir=${1:-build}
man1=docs/man/execq.1
man8=docs/man/execq-worker.8
unit=scripts/execq-worker.service
rotate=scripts/execq.logrotate

fail() {
	echo "check-packaging: $*" >&2
	exit 1
}

for f in "$man1" "$man8" "$unit" "$rotate"; do
	[ -f "$f" ] || fail "$f: missing (run this from the top of the checkout)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/execq-packaging.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# Man pages: groff must say nothing, on the default (ps) device, which
# man(1) uses to check, and on a terminal.
command -v groff >/dev/null || fail "groff is not installed"
for page in "$man1" "$man8"; do
	for dev in ps utf8; do
		groff -mandoc -ww -z -T"$dev" "$page" 2>"$tmp/groff.err" ||
		    fail "$page: groff -T$dev failed: $(cat "$tmp/groff.err")"
		if [ -s "$tmp/groff.err" ]; then
			cat "$tmp/groff.err" >&2
			fail "$page: groff -T$dev warns"
		fi
	done
done
echo "man pages: groff: ok"

# mandoc: warnings and errors fail; style hints (such as a referenced
# manual that is not installed here) do not.
if command -v mandoc >/dev/null; then
	mandoc -T lint -W warning "$man1" "$man8" ||
	    fail "mandoc -T lint found warnings or errors"
	echo "man pages: mandoc: ok"
else
	echo "man pages: mandoc not installed, skipped"
fi

# The unit, placeholders filled in, next to a man tree holding our pages
# (systemd-analyze checks Documentation=man:... with man(1)).
if command -v systemd-analyze >/dev/null; then
	[ -x "$bindir/execq-worker" ] ||
	    fail "$bindir/execq-worker: not built (make BUILD=$bindir all, or pass the build dir)"
	abs_bindir=$(cd "$bindir" && pwd)
	mkdir -p "$tmp/unit" "$tmp/etc/execq" "$tmp/man/man1" "$tmp/man/man8"
	cp "$man1" "$tmp/man/man1/"
	cp "$man8" "$tmp/man/man8/"
	sed -e "s|@BINDIR@|$abs_bindir|g" -e "s|@SYSCONFDIR@|$tmp/etc|g" \
	    "$unit" >"$tmp/unit/execq-worker.service"
	if grep -n '@[A-Z]*@' "$tmp/unit/execq-worker.service"; then
		fail "$unit: a placeholder is left after substitution"
	fi
	# Any message about our unit fails, a warning included; messages
	# about the host's own units do not.
	rc=0
	MANPATH="$tmp/man" systemd-analyze verify \
	    "$tmp/unit/execq-worker.service" >"$tmp/verify.out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] || grep -q 'execq' "$tmp/verify.out"; then
		cat "$tmp/verify.out" >&2
		fail "$unit: systemd-analyze verify failed (exit $rc)"
	fi
	echo "systemd unit: systemd-analyze verify: ok"
else
	echo "systemd unit: systemd-analyze not installed, skipped"
fi

# logrotate, in debug mode (it rotates nothing and runs no script), on a
# copy whose log paths point into the temporary directory.
if command -v logrotate >/dev/null; then
	mkdir -p "$tmp/log" "$tmp/state"
	chmod 0700 "$tmp/state"
	: >"$tmp/log/worker.log"
	: >"$tmp/state/audit.log"
	sed -e "s|/var/log/execq/|$tmp/log/|g" \
	    -e "s|/var/lib/execq/state/|$tmp/state/|g" \
	    "$rotate" >"$tmp/execq.logrotate"
	chmod 0644 "$tmp/execq.logrotate"
	grep -q "$tmp/log/worker.log" "$tmp/execq.logrotate" ||
	    fail "$rotate: no /var/log/execq/worker.log in it"
	grep -q "$tmp/state/audit.log" "$tmp/execq.logrotate" ||
	    fail "$rotate: no /var/lib/execq/state/audit.log in it"
	rc=0
	logrotate -d -s "$tmp/logrotate.status" "$tmp/execq.logrotate" \
	    >"$tmp/logrotate.out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] || grep -qi '^error' "$tmp/logrotate.out"; then
		cat "$tmp/logrotate.out" >&2
		fail "$rotate: logrotate -d failed (exit $rc)"
	fi
	echo "logrotate: logrotate -d: ok"
else
	echo "logrotate: logrotate not installed, skipped"
fi

echo "packaging: ok"
