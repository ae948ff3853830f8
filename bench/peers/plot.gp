# bench/peers/plot.gp: turns the CSV of strata-peers into a chart (docs/peers.png).
#   build/release/bench/strata-peers --csv peers.csv
#   gnuplot -e "csv='peers.csv'; out='docs/peers.png'" bench/peers/plot.gp
# Colours follow the engine in both panels.
# Left: ops/s per workload and engine (log scale). Right: strata/peer ratios (log scale;
# above the line at 1 strata is faster). Missing peers are NaN in the CSV and leave gaps.
if (!exists("csv")) csv = "peers.csv"
if (!exists("out")) out = "docs/peers.png"

set terminal pngcairo size 1600,700 font "sans,10" noenhanced
set output out
set datafile separator ","
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left horizontal font ",9"
set grid ytics mytics
set logscale y
set xtics rotate by -30 left font ",9"
set multiplot layout 1,2 title "strata vs peers (engines measured side by side, taking turns in rounds; 16-byte keys, 100-byte values)"

set title "throughput (ops/s per workload unit)"
set yrange [10:*]
set format y "%.0s%c"
plot for [col=4:8] csv using col:xtic(stringcolumn(1)) title columnheader(col) lc (col - 3)

set title "ratio strata / peer (> 1: strata faster)"
set yrange [0.001:10000]
set format y "%g"
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb "black"
plot for [col=9:12] csv using col:xtic(stringcolumn(1)) title columnheader(col) lc (col - 7)
unset multiplot
