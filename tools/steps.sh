# Shell functions of the net-making scripts (tools/contact-net.sh,
# tools/race-off.sh), sourced from the repository's root with WORK set.

# the shipped data and nets were made with the 6-point race table: the net valued
# the races outside the home boards (docs/bearoff.md#the-race-table)
export BGFAST_RACE_POINTS=6

# once DONE COMMAND...: run COMMAND, then mark the step done; skipped once DONE exists
once() {
    done_="$1"
    shift
    if [ ! -f "$done_" ]; then
        "$@"
        touch "$done_"
    fi
}

# race_values P: the 2-ply values of $BGFAST_NET of the race positions of ten files, the
# races of the 10-point race table valued by it, in $WORK/P-NAME; RV lists the ten
# directories in the order a training reads them, RV_OLD the nine without data/race/race-2.bgtd
race_values() {
    RV=""
    RV_OLD=""
    for f in race/race-2 training/selfplay-7 race/positions training/positions \
            training/selfplay-1 training/selfplay-2 training/selfplay-3 training/selfplay-4 \
            training/selfplay-5 training/selfplay-6; do
        d="$WORK/$1-$(echo "$f" | tr / -)"
        RESUME=""
        [ -d "$d" ] && RESUME="--resume"
        once "$d.done" python -m bgfast data values "data/$f.bgtd" -o "$d" --plies 2 --class race \
            --race-table "$WORK/os10.bgb" $RESUME
        RV="$RV $d"
        [ "$f" = race/race-2 ] || RV_OLD="$RV_OLD $d"
    done
}
