package chart_test

import (
	"fmt"
	"strings"

	"github.com/kinformer/kinformer/bench/internal/chart"
)

// One group of two bars; the SVG writes each bar's Text beside it.
func Example() {
	svg := chart.HBars("Watch events per second", false, []chart.Group{{
		Label: "pods, full speed",
		Bars: []chart.Bar{
			{Label: "kinformer", Value: 25000, Text: "25k/s", Color: "#2b7bba"},
			{Label: "client-go", Value: 5000, Text: "5k/s", Color: "#e3872d"},
		},
	}})
	fmt.Println(strings.HasPrefix(svg, "<svg "), strings.Contains(svg, ">25k/s<"), strings.Contains(svg, ">5k/s<"))
	// Output: true true true
}
