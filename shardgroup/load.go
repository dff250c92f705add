package shardgroup

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/shard"
)

// formatLoad writes points as LoadAnnotation holds them, grouping neighbours so that
// there are at most MaxLoadPoints: a group is its last hash with the sum of its loads,
// so the plan can still cut between groups, if no longer inside one.
func formatLoad(points []shard.Point) string {
	points = groupPoints(points, MaxLoadPoints)
	var b strings.Builder
	for i, p := range points {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%016x:%d", p.Hash, p.Load)
	}
	return b.String()
}

// groupPoints merges runs of consecutive points (sorted by hash) into at most max.
func groupPoints(points []shard.Point, max int) []shard.Point {
	if len(points) <= max {
		return points
	}
	per := (len(points) + max - 1) / max
	out := make([]shard.Point, 0, max)
	for i := 0; i < len(points); i += per {
		g := shard.Point{}
		for _, p := range points[i:min(i+per, len(points))] {
			g.Hash, g.Load = p.Hash, g.Load+p.Load
		}
		out = append(out, g)
	}
	return out
}

// parseLoad reads LoadAnnotation: at most MaxLoadPoints points, hashes ascending.
func parseLoad(text string) ([]shard.Point, error) {
	if text == "" {
		return nil, nil
	}
	parts := strings.Split(text, ",")
	if len(parts) > MaxLoadPoints {
		return nil, fmt.Errorf("%d load points, more than %d", len(parts), MaxLoadPoints)
	}
	out := make([]shard.Point, 0, len(parts))
	for i, part := range parts {
		h, n, ok := strings.Cut(part, ":")
		if !ok || len(h) != 16 {
			return nil, fmt.Errorf("load point %d %q: want HASH:COUNT", i+1, part)
		}
		hash, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("load point %d %q: %v", i+1, part, err)
		}
		load, err := strconv.ParseInt(n, 10, 64)
		if err != nil || load < 0 {
			return nil, fmt.Errorf("load point %d %q: the count is not a decimal count", i+1, part)
		}
		if i > 0 && hash <= out[i-1].Hash {
			return nil, fmt.Errorf("load point %d %q: not above the one before", i+1, part)
		}
		out = append(out, shard.Point{Hash: hash, Load: load})
	}
	return out, nil
}
