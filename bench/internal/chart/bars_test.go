package chart

import (
	"encoding/xml"
	"regexp"
	"strconv"
	"testing"
)

// barWidths returns the widths of the bars of an SVG, in order.
func barWidths(t *testing.T, svg string) []float64 {
	t.Helper()
	var ws []float64
	for _, m := range regexp.MustCompile(`<rect x="190" y="\d+" width="([0-9.]+)"`).FindAllStringSubmatch(svg, -1) {
		w, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	return ws
}

func TestHBars(t *testing.T) {
	groups := []Group{
		{Label: "a <&> b", Bars: []Bar{{Label: "one", Value: 10, Text: "10 B"}, {Label: "two", Value: 1000, Text: "1k B"}}},
		{Label: "empty"},
		{Label: "zero", Bars: []Bar{{Label: "none", Value: 0, Text: "0 B"}}},
	}
	for _, c := range []struct {
		name      string
		logScale  bool
		wantRatio float64 // width of the 1000 bar over the 10 bar's
	}{
		{"linear", false, 100},
		// Log: each length is the decades above the smallest value's floor (1), plus 0.1.
		{"log", true, (3 - 1 + 0.1) / 0.1},
	} {
		t.Run(c.name, func(t *testing.T) {
			svg := HBars("title & more", c.logScale, groups)
			if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
				t.Fatalf("not well-formed: %v\n%s", err, svg)
			}
			ws := barWidths(t, svg)
			if len(ws) != 3 {
				t.Fatalf("%d bars drawn, want 3:\n%s", len(ws), svg)
			}
			if ws[2] != 0 {
				t.Errorf("a zero value has width %v", ws[2])
			}
			if ratio := ws[1] / ws[0]; ratio < c.wantRatio*0.99 || ratio > c.wantRatio*1.01 {
				t.Errorf("bar widths %v: ratio %.3f, want %.3f", ws, ratio, c.wantRatio)
			}
		})
	}
}
