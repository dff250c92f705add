// Package chart draws the bar charts of the benchmark's results (bench/results/*.svg):
// horizontal bars in labelled groups, as one self-contained SVG document (no fonts or
// scripts fetched), each bar's value written beside it. It knows nothing of engines or
// scenarios: the harness picks the bars, their colours and the text of their values.
package chart
