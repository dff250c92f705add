package chart

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Bar is one bar: its length is Value, Text is written beside it (the value as the
// reader should see it, with its unit).
type Bar struct {
	Label string
	Value float64
	Text  string
	Color string // an SVG colour, such as "#2b7bba"
}

// Group is a set of bars drawn together under one label.
type Group struct {
	Label string
	Bars  []Bar
}

// HBars draws groups of horizontal bars under title. With logScale, lengths are
// proportional to the logarithm, for figures spanning orders of magnitude.
func HBars(title string, logScale bool, groups []Group) string {
	const (
		width, labelW, valueW = 760, 190, 110
		barH, gap, groupGap   = 16, 4, 14
		top                   = 40
	)
	maxV := 0.0
	rows := 0
	for _, g := range groups {
		for _, b := range g.Bars {
			maxV = math.Max(maxV, b.Value)
			rows++
		}
	}
	if maxV <= 0 {
		maxV = 1
	}
	scale := func(v float64) float64 {
		plot := float64(width - labelW - valueW)
		if v <= 0 {
			return 0
		}
		if logScale {
			lo := math.Floor(math.Log10(minPositive(groups)))
			hi := math.Log10(maxV)
			if hi <= lo {
				return plot
			}
			return plot * (math.Log10(v) - lo + 0.1) / (hi - lo + 0.1)
		}
		return plot * v / maxV
	}
	height := top + rows*(barH+gap) + len(groups)*groupGap + 10
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	scaleNote := ""
	if logScale {
		scaleNote = " (log scale)"
	}
	fmt.Fprintf(&sb, `<text x="10" y="22" font-size="15" font-weight="bold">%s%s</text>`+"\n", html.EscapeString(title), scaleNote)
	y := top
	for _, g := range groups {
		fmt.Fprintf(&sb, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y+barH-3, html.EscapeString(g.Label))
		for _, b := range g.Bars {
			w := scale(b.Value)
			fmt.Fprintf(&sb, `<text x="%d" y="%d" text-anchor="end" fill="#333">%s</text>`+"\n", labelW-6, y+barH-3, html.EscapeString(b.Label))
			fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", labelW, y, w, barH, b.Color)
			fmt.Fprintf(&sb, `<text x="%.1f" y="%d" fill="#333">%s</text>`+"\n", float64(labelW)+w+4, y+barH-3, html.EscapeString(b.Text))
			y += barH + gap
		}
		y += groupGap
	}
	sb.WriteString("</svg>\n")
	return sb.String()
}

// minPositive is the smallest positive value of any bar (1 when there is none): the
// lower end of a logarithmic scale.
func minPositive(groups []Group) float64 {
	m := math.Inf(1)
	for _, g := range groups {
		for _, b := range g.Bars {
			if b.Value > 0 && b.Value < m {
				m = b.Value
			}
		}
	}
	if math.IsInf(m, 1) {
		return 1
	}
	return m
}
