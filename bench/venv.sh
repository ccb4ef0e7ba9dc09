#!/usr/bin/env bash
# otava_venv.sh - makes build/otava-venv with Apache Otava from PyPI (once) and
# prints its python; exits non-zero, saying why on stderr, when it cannot.
set -euo pipefail
venv=${1:-build/otava-venv}
version=0.8.0
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import otava" 2>/dev/null; then
	echo "bench: installing apache-otava $version into $venv (once)" >&2
	python3 -m venv "$venv" >&2
	"$venv/bin/pip" install --quiet "apache-otava==$version" >&2
fi
echo "$venv/bin/python"
