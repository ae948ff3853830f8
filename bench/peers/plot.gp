# bench/peers/plot.gp: turns the CSV of strata-peers into a chart (docs/peers.png).
#   build/release/bench/strata-peers --csv docs/peers.csv
#   gnuplot -e "csv='docs/peers.csv'; out='docs/peers.png'; run='machine, date, commit'" \
#           bench/peers/plot.gp
# One panel per unit (ops/s, log scale), then strata/peer, then each engine's settings as
# the CSV's comment lines state them. Bars are the median round of a cell, error bars its
# lowest and highest round. Colours follow the engine in every panel. A missing peer is NaN
# in the CSV and leaves a gap.
if (!exists("csv")) csv = "peers.csv"
if (!exists("out")) out = "docs/peers.png"
if (!exists("run")) run = ""  # where and when the CSV was made, shown under the settings

# CSV columns: workload, clients, unit, then per engine (strata, lmdb, rocksdb, sqlite,
# wiredtiger, mutex_std) median, min, max; then per peer strata/peer median, min, max.
engines = 6
med(k) = 4 + 3 * k
ratio(j) = 4 + 3 * engines + 3 * (j - 1)
rows(unit) = sprintf("< grep -v '^#' '%s' | grep -e '^workload,' -e ',%s,'", csv, unit)
all_rows = sprintf("< grep -v '^#' '%s'", csv)

set terminal pngcairo size 1800,1100 font "sans,10" noenhanced
set output out
set datafile separator ","
set datafile missing "NaN"
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics mytics
set logscale y
set format y "%.0s%c"
set key top left font ",8" horizontal maxcols 3
set xtics font ",9" noenhanced
set multiplot layout 2,3 title "strata and its peers: one process, engines alternated in rounds within each cell (median of 3 rounds, bars: lowest and highest); 16-byte keys, 100-byte values; nothing durable"

do for [unit in "pairs/s items/s txn/s gets/s"] {
  set title unit
  set yrange [100:3e8]  # room above the bars for the key
  plot for [k=0:engines-1] rows(unit) using med(k):med(k)+1:med(k)+2:xtic(1) \
       title columnheader(med(k)) lc (k + 1)
}

set title "strata / peer (> 1: strata faster)"
set yrange [0.01:1e4]
set format y "%g"
set xtics rotate by -30 left
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb "black"
plot for [j=1:engines-1] all_rows using ratio(j):ratio(j)+1:ratio(j)+2:xtic(1) \
     title columnheader(ratio(j)) lc (j + 1)
unset arrow 1

# The settings, from the CSV's comment lines, and what the ceiling is.
settings = system(sprintf("grep '^# ' '%s' | sed 's/^# //' | fold -s -w 70", csv))
unset title
unset border
unset tics
unset grid
unset key
unset logscale y
set xrange [0:1]
set yrange [0:1]
set label 1 "Settings (every engine: no sync, no log; files on a tmpfs)\n\n".settings."\n\nmutex+std is a ceiling, not a peer: a single-process lock\naround std containers, with no durability, no MVCC and no\nconcurrency of readers (each get takes the lock).\n\nqueue-churn-1 runs once per engine (no rounds, no error bar).".(run eq "" ? "" : "\n\nRun: ".run) \
    at graph 0, graph 1 left front font ",9"
plot 2 notitle
unset multiplot
