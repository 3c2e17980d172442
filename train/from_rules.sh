#!/usr/bin/env bash
# The agent from the rules alone, in one command: self-play PPO with throw values (100 minutes
# on one core), then five rounds of expert iteration from its own search (the last two fit on
# the earlier rounds' games too, with --replay). About 5 hours: 100 minutes on one core, then
# 3.4 hours on two. Run it again to resume after a stop (each stage resumes or is skipped).
#
#   bash train/from_rules.sh [RUN_DIR]        (default runs/from-rules)
#
# The final network is RUN_DIR/exit-5/round-1/policy.safetensors; play it as
# ppo:RUN_DIR/exit-5/round-1/policy.safetensors. The PPO stage stops at its time limit, so
# how many decisions it trains (and the network it makes) depends on the machine's speed:
# ppo:scratch-exit is what it made on a 2-core machine. docs/from-scratch.md has what each
# stage measured. The command it runs is CRIBENV if set, else the project's own
# (.venv/bin/cribenv beside this train/ folder, as the README's set-up makes it, activated or
# not), else cribenv on PATH; with none of them it stops before writing anything (status 2).
set -euo pipefail
here=$(cd -- "$(dirname -- "$0")" > /dev/null && pwd)
run=${1:-runs/from-rules}
venv="$(dirname -- "$here")/.venv/bin/cribenv"
if [ -n "${CRIBENV:-}" ]; then
    read -r -a cribenv <<< "$CRIBENV"      # a command, with its words
elif [ -x "$venv" ]; then
    cribenv=("$venv")
elif command -v cribenv > /dev/null; then
    cribenv=(cribenv)
else
    echo "from_rules.sh: cannot find cribenv: $venv is not there and cribenv is not on PATH;" \
        "run the README's set-up command in $(dirname -- "$here"), or set CRIBENV" >&2
    exit 2
fi

# PPO: resumed from its last checkpoint after a stop (its time limit counts every session);
# done once the trainer has finished
if [ ! -f "$run/ppo/.done" ]; then
    resume=()
    if [ -f "$run/ppo/checkpoints/LATEST" ]; then resume=(--resume); fi
    "${cribenv[@]}" train --config "$here/configs/selfplay-from-rules.json" \
        --run-dir "$run/ppo" ${resume[@]+"${resume[@]}"}
    mkdir -p "$run/ppo" && touch "$run/ppo/.done"
fi

# round: base, games, seed, and the rounds whose games are replayed (each round resumes or,
# finished, is skipped by expert-iteration itself)
exit_round() {
    local n=$1 base=$2 games=$3 seed=$4 replay=()
    for r in "${@:5}"; do replay+=(--replay "$run/exit-$r/round-1/games"); done
    "${cribenv[@]}" expert-iteration --models own --base "$base" --playouts 300 \
        --run-dir "$run/exit-$n" --rounds 1 --games "$games" --workers 2 --eval-games 0 \
        --seed "$seed" ${replay[@]+"${replay[@]}"}
}
exit_round 1 "$run/ppo/policy.safetensors" 2000 0
exit_round 2 "$run/exit-1/round-1/policy.safetensors" 1000 1
exit_round 3 "$run/exit-2/round-1/policy.safetensors" 1500 2
exit_round 4 "$run/exit-3/round-1/policy.safetensors" 1500 3 3
exit_round 5 "$run/exit-4/round-1/policy.safetensors" 1200 4 3 4
