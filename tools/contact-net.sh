#!/bin/sh
# Makes the shipped net, bgfast/data/net/bgfast-net.npz (docs/training.md#the-contact-net),
# in rounds of training the contact net towards 2-ply values, then a crashed net:
#   0. the net of tools/race-net.sh (the TD-trained contact net, the race net
#      trained towards its 1-ply values);
#   1. its contact net widened with the five feature groups and trained
#      towards that net's 2-ply values on the 200,000 training positions and
#      the 200,000 self-play positions of data/training/selfplay-1.bgtd;
#   2. that net trained again, with the 2-ply values of round 1's net on the
#      positions of its own self-play (data/training/selfplay-2.bgtd) added;
#   3. round 2's net trained again towards its own 2-ply values on all four
#      position files (data/training/selfplay-3.bgtd added, by round 2's net);
#   4. round 3's net trained again with its 2-ply values on
#      data/training/selfplay-4.bgtd (its own self-play) added;
#   5. round 4's net given 256 hidden units (bgfast train supervised
#      --widen-to) and trained again towards round 4's 2-ply values on all
#      six position files (data/training/selfplay-5.bgtd added, by round 4's net);
#   6. that training continued at a lower learning rate (the same values),
#      then a crashed net (--crashed-net, a copy of the contact net) trained
#      on the crashed positions alone;
#   7. the crashed net trained again, with round 6's 2-ply values of the
#      200,000 crashed positions of its own self-play
#      (data/training/crashed-1.bgtd) added;
#   8. the contact and crashed nets trained again towards round 7's 2-ply
#      values on all eight position files (data/training/selfplay-6.bgtd,
#      200,000 positions of round 7's self-play, added);
#   9. the race net (that of step 0 until then) trained towards the values
#      of the 10-point race table (bgfast bearoff build --one-sided 10) for
#      the races it holds, and round 8's 2-ply values for the others, on the
#      race positions of ten files (data/race/race-2.bgtd, 400,000 races of
#      round 8's self-play, and data/training/selfplay-7.bgtd added): at a
#      learning rate of 1e-3 without, then with race-2, then at 1e-4; then
#      once more at 1e-4 towards the 2-ply values of that net
#      (docs/training.md#the-race-net-from-a-race-table);
#  10. the race net given the borne-off thermometer (the feature group off)
#      and trained in three steps towards the 2-ply values of the net before
#      each (tools/race-off.sh,
#      docs/training.md#the-race-net-with-the-borne-off-thermometer);
#  11. round 10's contact net split into plan nets (one per band of the
#      race, bgfast train supervised --plan-nets), trained with the crashed
#      net towards round 10's 2-ply values (the 10-point race table's) of
#      the contact and crashed positions of all nine position files
#      (docs/training.md#plan-nets);
#  12. the plan nets and the crashed net trained again, for up to 200
#      epochs, towards round 11's 2-ply values of the contact and crashed
#      positions of ten files (data/training/crashed-2.bgtd, 200,000
#      crashed positions of round 11's self-play, added)
#      (docs/training.md#round-12-more-crashed-positions);
#  13. the crashed net split by the side crashed (--crashed-sides: the side
#      on roll, or its opponent alone), each trained further on its own
#      positions towards the values of round 12
#      (docs/training.md#round-13-a-crashed-net-per-side);
#  14. the two crashed nets trained again towards round 13's 2-ply values of
#      the crashed positions of eleven files (data/training/crashed-3.bgtd,
#      200,000 crashed positions of round 13's self-play, added)
#      (docs/training.md#round-14-round-13s-values-of-the-crashed-positions);
#  15. the two crashed nets trained again towards round 14's 2-ply values of
#      the crashed positions of twelve files (data/training/crashed-4.bgtd,
#      200,000 crashed positions of round 14's self-play, added)
#      (docs/training.md#round-15-round-14s-values-of-the-crashed-positions);
#  16. the one-sided race net (bgfast train one-sided) trained by value
#      iteration from the 12-point race table on the race sides of every
#      position file, and given to round 15's net
#      (docs/training.md#the-one-sided-race-net);
#  17. the one-sided race net trained on from round 16's with a third
#      distribution, the rolls to bring every checker out of the other
#      side's home board, on those sides and the ones with a checker there
#      (docs/training.md#backgammons-the-third-distribution);
#  18. the contact and crashed nets trained towards round 17's values of the
#      contact and crashed positions of nine files (the four crashed files
#      and selfplay-3 to selfplay-7), each the mean of its 1-ply and 2-ply
#      probabilities, so that the net values the side on roll alike at odd
#      and even plies (docs/training.md#the-side-on-roll-at-odd-and-even-plies).
# Deterministic: the same bits every run with the same build
# (docs/training.md#reproducing-the-shipped-file), about five hours on two
# free cores for rounds 1 to 10 (round 10 about 40 minutes of it), about an
# hour and a half more for round 11, about two hours more for round 12,
# ten minutes more for round 13, about an hour and a half more for round 14
# (beside other jobs), about 50 minutes more for round 15, about an hour
# more for round 16 (6 GB of memory to build the 12-point table) and about
# 70 minutes more for round 17 (beside other jobs) and about two hours more
# for round 18 (90 minutes of it the values).  Each step's
# output stays in WORK, and a step whose output exists is skipped, so an
# interrupted run goes on where it stopped when run again with the same WORK.
# ROUNDS=2 to 10 stops early (docs/training.md#further-rounds);
# round 5 keeps 128 hidden units unless HIDDEN=H (up to 256) is given;
# ROUNDS=6 to 18 (the default) use 256.
# Usage: [ROUNDS=2..18] [HIDDEN=H] tools/contact-net.sh [OUT [WORK]]
#   (default: contact-net.npz and the directory contact-net.work in the current directory)
set -e
ROUNDS="${ROUNDS:-18}"
case "$ROUNDS" in
    2|3|4|5) HIDDEN="${HIDDEN:-128}" ;;
    6|7|8|9|10|11|12|13|14|15|16|17|18) HIDDEN="${HIDDEN:-256}" ;;
    *) echo "contact-net.sh: ROUNDS must be 2 to 18" >&2; exit 2 ;;
esac
if [ "$HIDDEN" != 128 ] && [ "$ROUNDS" -lt 5 ]; then
    echo "contact-net.sh: HIDDEN applies to rounds 5 to 18 only (ROUNDS=5 to 18)" >&2
    exit 2
fi
OUT="$(realpath -m "${1:-contact-net.npz}")"
WORK="$(realpath -m "${2:-contact-net.work}")"
cd "$(dirname "$0")/.."
mkdir -p "$WORK"
FEATURES="contain,contact,anchors,hits,mobility"
FIT="--class contact --class crashed --epochs 100 --patience 8 --quiet"
VALUE_CLASSES=""
PLIES=2

. tools/steps.sh

# values DIR POSITIONS: the values of $BGFAST_NET at $PLIES plies (1,2: the
# mean of the two) of the classes of $VALUE_CLASSES (empty: all), resumed if
# interrupted
values() {
    RESUME=""
    [ -d "$1" ] && RESUME="--resume"
    once "$1.done" python -m bgfast data values "$2" -o "$1" --plies "$PLIES" $VALUE_CLASSES \
        $RESUME
}

# round_values R NAME...: values of each position file NAME of data/training/ in
# $WORK/vR-NAME (training: the 200,000 training positions, positions.bgtd); RV
# lists those directories in the order of the names, the order a training reads them
round_values() {
    r="$1"
    shift
    RV=""
    for f in "$@"; do
        src="data/training/$f.bgtd"
        [ "$f" = training ] && src=data/training/positions.bgtd
        values "$WORK/v$r-$f" "$src"
        RV="$RV $WORK/v$r-$f"
    done
}

# crashed_round R NAME...: round R (14 on) of the two crashed nets: the
# 2-ply values of the crashed positions of the files NAME (round_values) by
# the net $LAST, which both crashed nets then train from towards them
crashed_round() {
    cr="$1"
    shift
    export BGFAST_NET="$LAST"
    VALUE_CLASSES="--class crashed"
    round_values "$cr" "$@"
    once "$WORK/round$cr-h$HIDDEN.done" python -m bgfast train supervised $RV \
        -o "$WORK/round$cr-h$HIDDEN.npz" --init "$LAST" --class crashed --keep-shape \
        --lr 1e-4 --epochs 100 --patience 8 --quiet --resume
    LAST="$WORK/round$cr-h$HIDDEN.npz"
}

once "$WORK/base.done" sh tools/race-net.sh "$WORK/base.npz"

export BGFAST_NET="$WORK/base.npz"
values "$WORK/v1-training" data/training/positions.bgtd
values "$WORK/v1-selfplay-1" data/training/selfplay-1.bgtd
once "$WORK/round1.done" python -m bgfast train supervised "$WORK/v1-training" \
    "$WORK/v1-selfplay-1" -o "$WORK/round1.npz" --init "$WORK/base.npz" --features "$FEATURES" \
    --lr 1e-3 $FIT --resume

export BGFAST_NET="$WORK/round1.npz"
values "$WORK/v2-selfplay-2" data/training/selfplay-2.bgtd
# train DONE OUT INIT LABELS...: a round of training from INIT (options: $WIDEN), skipped once DONE exists
WIDEN=""
train() {
    done_="$1"
    out="$2"
    init="$3"
    shift 3
    once "$done_" python -m bgfast train supervised "$@" -o "$out" --init "$init" --lr 3e-4 $FIT \
        $WIDEN --resume
}

train "$WORK/round2.done" "$WORK/round2.npz" "$WORK/round1.npz" \
    "$WORK/v2-selfplay-2" "$WORK/v1-training" "$WORK/v1-selfplay-1"
if [ "$ROUNDS" -ge 3 ]; then
    export BGFAST_NET="$WORK/round2.npz"
    round_values 3 selfplay-3 training selfplay-1 selfplay-2
    train "$WORK/round3.done" "$WORK/round3.npz" "$WORK/round2.npz" $RV
fi
if [ "$ROUNDS" -ge 4 ]; then
    export BGFAST_NET="$WORK/round3.npz"
    values "$WORK/v4-selfplay-4" data/training/selfplay-4.bgtd
    train "$WORK/round4.done" "$WORK/round4.npz" "$WORK/round3.npz" "$WORK/v4-selfplay-4" \
        "$WORK/v3-selfplay-3" "$WORK/v3-training" "$WORK/v3-selfplay-1" "$WORK/v3-selfplay-2"
fi
if [ "$ROUNDS" -ge 5 ]; then
    export BGFAST_NET="$WORK/round4.npz"
    round_values 5 selfplay-5 selfplay-4 selfplay-3 training selfplay-1 selfplay-2
    V5="$RV"
    R5=round5
    if [ "$HIDDEN" != 128 ]; then
        R5="round5-h$HIDDEN"
        WIDEN="--widen-to $HIDDEN"
    fi
    train "$WORK/$R5.done" "$WORK/$R5.npz" "$WORK/round4.npz" $V5
    if [ "$ROUNDS" -ge 6 ]; then
        once "$WORK/$R5-more.done" python -m bgfast train supervised $V5 -o "$WORK/$R5-more.npz" \
            --init "$WORK/$R5.npz" --lr 1e-4 --class contact --class crashed --epochs 150 \
            --patience 8 --quiet --resume
        once "$WORK/round6-h$HIDDEN.done" python -m bgfast train supervised $V5 \
            -o "$WORK/round6-h$HIDDEN.npz" --init "$WORK/$R5-more.npz" --crashed-net \
            --class crashed --lr 3e-4 --epochs 300 --patience 10 --quiet --resume
        LAST="$WORK/round6-h$HIDDEN.npz"
        if [ "$ROUNDS" -ge 7 ]; then
            export BGFAST_NET="$LAST"
            values "$WORK/v7-crashed-1" data/training/crashed-1.bgtd
            once "$WORK/round7-h$HIDDEN.done" python -m bgfast train supervised \
                "$WORK/v7-crashed-1" $V5 -o "$WORK/round7-h$HIDDEN.npz" --init "$LAST" \
                --class crashed --lr 3e-4 --epochs 300 --patience 10 --quiet --resume
            LAST="$WORK/round7-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 8 ]; then
            export BGFAST_NET="$LAST"
            round_values 8 selfplay-6 crashed-1 selfplay-5 selfplay-4 selfplay-3 training \
                selfplay-1 selfplay-2
            once "$WORK/round8-h$HIDDEN.done" python -m bgfast train supervised $RV \
                -o "$WORK/round8-h$HIDDEN.npz" --init "$LAST" --lr 1e-4 $FIT --resume
            LAST="$WORK/round8-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 9 ]; then
            once "$WORK/os10.done" python -m bgfast bearoff build --one-sided 10 \
                -o "$WORK/os10.bgb" --quiet
            export BGFAST_NET="$LAST"
            race_values r9
            RACE="--class race --keep-shape --quiet --resume"
            once "$WORK/race1-h$HIDDEN.done" python -m bgfast train supervised $RV_OLD \
                -o "$WORK/race1-h$HIDDEN.npz" --init "$LAST" --lr 1e-3 --epochs 30 --patience 4 $RACE
            once "$WORK/race2-h$HIDDEN.done" python -m bgfast train supervised $RV \
                -o "$WORK/race2-h$HIDDEN.npz" --init "$WORK/race1-h$HIDDEN.npz" --lr 1e-3 \
                --epochs 30 --patience 5 $RACE
            once "$WORK/race3-h$HIDDEN.done" python -m bgfast train supervised $RV \
                -o "$WORK/race3-h$HIDDEN.npz" --init "$WORK/race2-h$HIDDEN.npz" --lr 1e-4 \
                --epochs 10 --patience 3 $RACE
            export BGFAST_NET="$WORK/race3-h$HIDDEN.npz"
            race_values r9b
            once "$WORK/round9-h$HIDDEN.done" python -m bgfast train supervised $RV \
                -o "$WORK/round9-h$HIDDEN.npz" --init "$WORK/race3-h$HIDDEN.npz" --lr 1e-4 \
                --epochs 20 --patience 4 $RACE
            LAST="$WORK/round9-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 10 ]; then
            once "$WORK/round10-h$HIDDEN.done" sh tools/race-off.sh "$LAST" \
                "$WORK/round10-h$HIDDEN.npz" "$WORK/round10"
            LAST="$WORK/round10-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 11 ]; then
            # round 10's values with the race table bgfast plays with (10 points)
            export BGFAST_NET="$LAST" BGFAST_RACE_POINTS=10
            VALUE_CLASSES="--class contact --class crashed"
            round_values 11 selfplay-7 selfplay-6 crashed-1 selfplay-5 selfplay-4 selfplay-3 \
                training selfplay-1 selfplay-2
            once "$WORK/round11-h$HIDDEN.done" python -m bgfast train supervised $RV \
                -o "$WORK/round11-h$HIDDEN.npz" --init "$LAST" --plan-nets --keep-shape --lr 1e-4 \
                $FIT --resume
            LAST="$WORK/round11-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 12 ]; then
            # round 11's values, crashed-2 (its self-play's crashed positions) added
            export BGFAST_NET="$LAST"
            round_values 12 selfplay-7 selfplay-6 crashed-1 crashed-2 selfplay-5 selfplay-4 \
                selfplay-3 training selfplay-1 selfplay-2
            once "$WORK/round12-h$HIDDEN.done" python -m bgfast train supervised $RV \
                -o "$WORK/round12-h$HIDDEN.npz" --init "$LAST" --keep-shape --lr 1e-4 $FIT \
                --epochs 200 --resume
            LAST="$WORK/round12-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 13 ]; then
            # the same values (round 11's), the crashed positions alone
            once "$WORK/round13-h$HIDDEN.done" python -m bgfast train supervised $RV \
                -o "$WORK/round13-h$HIDDEN.npz" --init "$LAST" --crashed-sides --class crashed \
                --keep-shape --lr 1e-4 --epochs 100 --patience 8 --quiet --resume
            LAST="$WORK/round13-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 14 ]; then
            # round 13's values of the crashed positions, crashed-3 (its self-play's) added
            crashed_round 14 crashed-3 selfplay-7 selfplay-6 crashed-1 crashed-2 selfplay-5 \
                selfplay-4 selfplay-3 training selfplay-1 selfplay-2
        fi
        if [ "$ROUNDS" -ge 15 ]; then
            # round 14's values of the crashed positions, crashed-4 (its self-play's) added
            crashed_round 15 crashed-4 crashed-3 selfplay-7 selfplay-6 crashed-1 crashed-2 \
                selfplay-5 selfplay-4 selfplay-3 training selfplay-1 selfplay-2
        fi
        if [ "$ROUNDS" -ge 16 ]; then
            # the one-sided race net, by value iteration from the 12-point table, on the
            # race sides of every position file
            once "$WORK/os12.done" python -m bgfast bearoff build --one-sided 12 \
                -o "$WORK/os12.bgb" --quiet
            once "$WORK/round16-h$HIDDEN.done" python -m bgfast train one-sided \
                data/race/positions.bgtd data/race/race-2.bgtd data/training/*.bgtd \
                -o "$WORK/round16-h$HIDDEN.npz" --init "$LAST" --table "$WORK/os12.bgb" \
                --rounds 4 --distributions 2 --quiet --resume
            LAST="$WORK/round16-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 17 ]; then
            # its third distribution (backgammons), from round 16's one-sided race net
            once "$WORK/round17-h$HIDDEN.done" python -m bgfast train one-sided \
                data/race/positions.bgtd data/race/race-2.bgtd data/training/*.bgtd \
                -o "$WORK/round17-h$HIDDEN.npz" --init "$LAST" --from-init \
                --table "$WORK/os12.bgb" --rounds 3 --quiet --resume
            LAST="$WORK/round17-h$HIDDEN.npz"
        fi
        if [ "$ROUNDS" -ge 18 ]; then
            # round 17's mean 1-ply/2-ply values of the contact and crashed positions of
            # nine files, in the order the training reads them
            export BGFAST_NET="$LAST"
            VALUE_CLASSES="--class contact --class crashed"
            PLIES=1,2
            round_values 18 crashed-1 crashed-2 crashed-3 crashed-4 selfplay-3 selfplay-4 \
                selfplay-5 selfplay-6 selfplay-7
            once "$WORK/round18-h$HIDDEN.done" python -m bgfast train supervised $RV \
                -o "$WORK/round18-h$HIDDEN.npz" --init "$LAST" --keep-shape --lr 1e-4 $FIT --resume
            LAST="$WORK/round18-h$HIDDEN.npz"
        fi
        cp "$LAST" "$OUT"
    else
        cp "$WORK/$R5.npz" "$OUT"
    fi
else
    cp "$WORK/round$ROUNDS.npz" "$OUT"
fi
