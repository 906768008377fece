#!/usr/bin/env bash
# The soak run of issue 10 (not in CI): the crash harness's writers and
# refreshes plus pgbench clients on a TRIGGER ON UPDATE view, against the
# real binary, killed with SIGKILL every 15–45 s and restarted, for the
# given duration (default 10m). Every restart is checked (acknowledged
# commits, whole statements, CHECK MATERIALIZED VIEW, the streaming table
# exactly once); at the end every view is refreshed and checked.
#
#   scripts/soak.sh [DURATION] [extra go test flags, e.g. -crash.seed N -soak.clients 32]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration=${1:-10m}
shift || true
exec go test -count=1 -tags crash,soak -run '^TestSoak$' -timeout 0 -v ./cmd/mvserver -soak.duration "$duration" "$@"
