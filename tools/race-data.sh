#!/bin/sh
# Builds, or resumes, the race training data of docs/training.md in
# data/race/: 40,000 race positions of seeded self-play (no bear-offs, none
# of the training or benchmark positions), each labelled by a rollout of the
# net played to the end.  Run from anywhere; stop with Ctrl-C (the shard
# being filled is written first) and run again to go on.
set -e
cd "$(dirname "$0")/.."
# the net that made these data (their shards record its checksum)
export BGFAST_NET=data/net/td-net.npz
# the shipped data and nets were made with the 6-point race table: the net valued
# the races outside the home boards (docs/bearoff.md#the-race-table)
export BGFAST_RACE_POINTS=6
mkdir -p data/race
if [ ! -f data/race/positions.bgtd ]; then
    nice -n 19 python -m bgfast data positions -n 40000 --seed 3 --class race --no-bearoffs \
        --exclude data/training/positions.bgtd --exclude data/benchmark/decisions.bgtd \
        --exclude data/benchmark-full/decisions.bgtd -o data/race/positions.bgtd
fi
RESUME=""
[ -d data/race/labels ] && RESUME="--resume"
BGFAST_PROGRESS=1 TQDM_MININTERVAL=300 nice -n 19 python -m bgfast data label \
    data/race/positions.bgtd -o data/race/labels \
    --trials 72 --truncate 0 --seed 1 --jobs 2 $RESUME
