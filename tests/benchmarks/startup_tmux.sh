#!/usr/bin/env bash
# Time from launching `heedful` in a real terminal (tmux) until the first screen is drawn, i.e. the
# header's context gauge shows a count. Usage: tests/benchmarks/startup_tmux.sh [runs] [heedful]
set -euo pipefail
runs=${1:-5}
heedful=${2:-.venv/bin/heedful}
# What counts as drawn: by default the header gauge with a count (the whole first screen, filled in).
ready=${READY_PATTERN:-context [0-9≈]}
scratch=$(mktemp -d)
trap 'tmux kill-session -t heedful-startup 2>/dev/null || true; rm -rf "$scratch"' EXIT
for run in $(seq "$runs"); do
    start=$(date +%s.%N)
    tmux new-session -d -s heedful-startup -x 100 -y 30 \
        "HEEDFUL_DATA_DIR=$scratch/data HEEDFUL_CONFIG=$scratch/config.toml $heedful"
    until tmux capture-pane -p -t heedful-startup 2>/dev/null | grep -q "$ready"; do
        sleep 0.01
    done
    end=$(date +%s.%N)
    tmux kill-session -t heedful-startup
    awk -v run="$run" -v a="$start" -v b="$end" 'BEGIN { printf "run %d: %.3f s\n", run, b - a }'
done
