#!/usr/bin/env bash
# Creates bench/.venv-i2d: invoice2data from PyPI, in its own virtualenv (git-ignored), so that its
# dependencies never mix with docassay's. invoice2data reads PDFs with `pdftotext` (Debian's
# poppler-utils), installed here when missing and when we may (root with apt-get).
#   bash bench/setup_invoice2data.sh [VERSION]        default: the version pinned below
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="$HERE/.venv-i2d"
VERSION="${1:-${I2D_VERSION:-1.0.1}}"
PY="${PYTHON:-python3}"

if ! command -v pdftotext >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq poppler-utils >/dev/null
  else
    echo "pdftotext is missing: install poppler-utils (apt-get install -y poppler-utils)" >&2
    exit 1
  fi
fi
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q "invoice2data==$VERSION"
"$VENV/bin/python" -c "import invoice2data, importlib.metadata as m; print('invoice2data', m.version('invoice2data'), 'in', '$VENV')"
