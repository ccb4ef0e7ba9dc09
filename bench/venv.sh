#!/usr/bin/env bash
# venv.sh - makes a bench peer's virtual environment (once) and prints its python.
#
# usage: bench/venv.sh VENV REQUIREMENTS
#
# REQUIREMENTS is a pip requirements file whose comment lines also say
#   # import: MODULE...    what must import for the environment to be whole
#   # debian: PACKAGE...   the Debian packages that hold the same modules (if any)
# The environment is rebuilt when the file changes. Packages come from PyPI
# at the pinned versions; where pip cannot install them (no index), the
# environment uses the system python's site packages instead when the Debian
# packages are there (other versions: said on stderr; pip is tried again on
# the next call), else it exits non-zero naming what to install.
set -euo pipefail
venv=$1 req=$2
modules=$(sed -n 's/^# import: *//p' "$req")
debian=$(sed -n 's/^# debian: *//p' "$req")
check="import ${modules// /, }"
stamp=$venv/.requirements

if [ -x "$venv/bin/python" ] && cmp -s "$req" "$stamp" && "$venv/bin/python" -c "$check" 2>/dev/null; then
	echo "$venv/bin/python"
	exit 0
fi
rm -rf "$venv"
echo "bench: installing $(grep -v '^#' "$req" | xargs) into $venv (once)" >&2
if python3 -m venv "$venv" >&2 && "$venv/bin/pip" install --quiet --disable-pip-version-check \
	-r "$req" >&2 && "$venv/bin/python" -c "$check"; then
	cp "$req" "$stamp"
	echo "$venv/bin/python"
	exit 0
fi
# no PyPI: Debian's packages, seen through a venv of the system python
rm -rf "$venv"
sys_py=/usr/bin/python3
if [ -n "$debian" ] && [ -x "$sys_py" ] && "$sys_py" -c "$check" 2>/dev/null &&
	"$sys_py" -m venv --system-site-packages "$venv" >&2; then
	echo "bench: pip could not install from PyPI; $venv uses Debian's $debian ($("$sys_py" -c \
		"import ${modules%% *} as m; print(m.__name__, m.__version__)"), not the pinned versions)" >&2
	{ cat "$req"; echo "# Debian's packages: pip is tried again next time"; } >"$stamp"
	echo "$venv/bin/python"
	exit 0
fi
rm -rf "$venv"
echo "bench: cannot make $venv: pip could not install from PyPI${debian:+ and $sys_py lacks" \
	"$modules (apt-get install $debian)}" >&2
exit 1
