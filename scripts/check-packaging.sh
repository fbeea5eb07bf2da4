#!/usr/bin/env bash
# Checks the packaging files: the man pages, the systemd unit and the
# logrotate config; then make install into a temporary DESTDIR, for
# PREFIX=/usr and the default PREFIX. Run it from the top of the
# checkout (make packaging does):
#
#   scripts/check-packaging.sh [BINDIR]
#
# BINDIR holds a built execq-worker (default: build); the unit is checked
# with @BINDIR@ pointing there, since systemd-analyze wants the binary to
# exist, and make install is run with BUILD=BINDIR ($MAKE, default make).
# groff and man are required; mandoc, systemd-analyze and logrotate are
# used when installed. Starts nothing, writes only in a temporary
# directory.
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

# make install into $tmp/dest<n> with the given make arguments only (not
# the caller's: no MAKEFLAGS, no PREFIX or other directory from the
# environment): the config files must land in ETC, the unit must name
# ETC's worker.json, and the cron file's PATH must hold PREFIX/bin and no
# directory twice.
n=0
check_install() {
	local prefix=$1 etc=$2 d path dup unit want
	shift 2
	n=$((n + 1))
	d=$tmp/dest$n
	(unset MAKEFLAGS MFLAGS PREFIX SYSCONFDIR LOCALSTATEDIR MANDIR \
	    DOCDIR UNITDIR &&
	    exec ${MAKE:-make} --no-print-directory -s install \
	    BUILD="$bindir" DESTDIR="$d" "$@") >"$tmp/install.out" 2>&1 || {
		cat "$tmp/install.out" >&2
		fail "make install $*: failed"
	}
	[ -x "$d$prefix/bin/execq-worker" ] && [ -x "$d$prefix/bin/execq" ] ||
	    fail "make install $*: no $prefix/bin/execq-worker or execq"
	for f in execq/worker.json cron.d/execq-cleanup logrotate.d/execq; do
		[ -f "$d$etc/$f" ] ||
		    fail "make install $*: no $etc/$f (in: $(cd "$d" &&
		    find . -path '*/etc/*' -type f | tr '\n' ' '))"
	done
	unit=$d$prefix/lib/systemd/system/execq-worker.service
	[ -f "$unit" ] || fail "make install $*: no execq-worker.service"
	if grep -n '@[A-Z]*@' "$unit"; then
		fail "make install $*: a placeholder is left in the unit"
	fi
	want="ExecStart=$prefix/bin/execq-worker --config $etc/execq/worker.json"
	grep -qx -- "$want" "$unit" || fail "make install $*: the unit has" \
	    "'$(grep '^ExecStart=' "$unit")', not '$want'"
	path=$(sed -n 's/^PATH=//p' "$d$etc/cron.d/execq-cleanup")
	case ":$path:" in
	*":$prefix/bin:"*) ;;
	*) fail "make install $*: the cron PATH=$path lacks $prefix/bin" ;;
	esac
	dup=$(printf '%s\n' "$path" | tr ':' '\n' | sort | uniq -d)
	[ -z "$dup" ] ||
	    fail "make install $*: the cron PATH=$path repeats $dup"
	man -l "$d$prefix/share/man/man8/execq-worker.8" >/dev/null ||
	    fail "make install $*: man -l execq-worker.8 failed"
	echo "make install${*:+ $*}: ok (config in $etc)"
}
command -v man >/dev/null || fail "man is not installed"
check_install /usr /etc PREFIX=/usr
check_install /usr/local /usr/local/etc
check_install /usr/local /etc SYSCONFDIR=/etc

echo "packaging: ok"
