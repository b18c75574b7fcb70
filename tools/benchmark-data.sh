#!/bin/sh
# Builds, or resumes, the full-size benchmark of docs/benchmark.md in
# data/benchmark-full/: 3,000 decisions per set, each candidate play rolled
# out 288 times, held out from the training positions.  Its positions come
# from self-play that includes gnubg through gnubg-nn (pip install gnubg-nn),
# so the players are named explicitly.  Run from anywhere; stop with SIGTERM
# (the shard being filled is written first) and run again to go on.
set -e
cd "$(dirname "$0")/.."
# the net that made these data (their shards record its checksum)
export BGFAST_NET=data/net/td-net.npz
# the shipped data and nets were made with the 6-point race table: the net valued
# the races outside the home boards (docs/bearoff.md#the-race-table)
export BGFAST_RACE_POINTS=6
RESUME=""
[ -f data/benchmark-full/decisions.bgtd ] && RESUME="--resume"
BGFAST_PROGRESS=1 TQDM_MININTERVAL=300 nice -n 19 python -m bgfast benchmark build \
    -o data/benchmark-full --decisions 3000 --trials 288 \
    --players net=45,pubeval=20,easy=10,medium=10,beginner=10,expert=5,gnubg=10 \
    --exclude data/training/positions.bgtd --checkpoint-seconds 120 $RESUME
