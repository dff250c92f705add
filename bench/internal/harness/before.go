package harness

import (
	"fmt"
	"strings"
)

// A figure is worse than before only when it is worse by more than beforeMargin and the
// two ranges of runs do not overlap: a difference the runs' own spread covers is noise.
const beforeMargin = 0.10

// compared is one figure of kinformer now and before.
type compared struct {
	scenario, metric string
	now, before      Spread
	ratio            float64 // now ÷ before
	worse, better    bool    // beyond the margin and the spread
}

// againstBefore holds every figure of every scenario where both kinformer and Before ran.
func (r *Report) againstBefore() []compared {
	var out []compared
	seen := map[string]bool{}
	for _, o := range r.Outcomes {
		sc := o.Scenario
		if seen[sc.ID] || o.Engine != Before {
			continue
		}
		seen[sc.ID] = true
		now, before := r.outcome(sc.ID, Kinformer), r.outcome(sc.ID, Before)
		if now == nil || before == nil {
			continue
		}
		for _, m := range metricsFor(sc) {
			n, b := spreadOf(now.Results, m), spreadOf(before.Results, m)
			if n.N == 0 || b.N == 0 || b.Median == 0 {
				continue
			}
			c := compared{scenario: sc.ID, metric: m.Name, now: n, before: b, ratio: n.Median / b.Median}
			if m.Higher {
				c.worse = c.ratio < 1-beforeMargin && n.Max < b.Min
				c.better = c.ratio > 1+beforeMargin && n.Min > b.Max
			} else {
				c.worse = c.ratio > 1+beforeMargin && n.Min > b.Max
				c.better = c.ratio < 1-beforeMargin && n.Max < b.Min
			}
			out = append(out, c)
		}
	}
	return out
}

// writeBefore writes the comparison with the earlier commit, when there is one: the
// figures that are worse first, then every figure.
func (r *Report) writeBefore(b *strings.Builder) {
	cs := r.againstBefore()
	if len(cs) == 0 {
		return
	}
	worse, better := 0, 0
	for _, c := range cs {
		if c.worse {
			worse++
		}
		if c.better {
			better++
		}
	}
	fmt.Fprintf(b, "## Against the code before (%s)\n\n", orUnknown(r.Before))
	fmt.Fprintf(b, "kinformer-runner built from commit %s ran beside kinformer in every scenario kinformer runs without engine-specific flags, alternating with the others. "+
		"A figure counts as worse (or better) only when its median moved by more than %.0f%% and the two ranges of runs do not overlap. "+
		"**%d of %d figures are worse, %d better.**\n\n", orUnknown(r.Before), 100*beforeMargin, worse, len(cs), better)
	b.WriteString("| scenario | figure | now | before | now ÷ before | |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, c := range cs {
		verdict := ""
		switch {
		case c.worse:
			verdict = "**worse**"
		case c.better:
			verdict = "better"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s (%s–%s) | %s (%s–%s) | %s | %s |\n", c.scenario, c.metric,
			fmtNum(c.now.Median), fmtNum(c.now.Min), fmtNum(c.now.Max),
			fmtNum(c.before.Median), fmtNum(c.before.Min), fmtNum(c.before.Max), fmtNum(c.ratio), verdict)
	}
	b.WriteString("\n")
}
