package measure

import (
	"math"
	"slices"
	"strconv"
)

// SentAnnotation is the annotation the stream server stamps on every event object: the
// time it sent the event, in Unix nanoseconds, as 19 zero-padded digits. List items
// carry all zeros.
const SentAnnotation = "bench.kinformer.io/sent-unix-nano"

// SentUnixNano returns the send time stamped in an object's annotations, and false when
// there is none (no annotation, all zeros as on list items, or not a number).
func SentUnixNano(annotations map[string]string) (int64, bool) {
	s, ok := annotations[SentAnnotation]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// Percentiles sorts samples in place and returns, for each q in [0, 1], its exact
// nearest-rank percentile: the smallest sample that at least a fraction q of the samples
// are less than or equal to. With no samples every percentile is 0.
func Percentiles(samples []int64, qs ...float64) []int64 {
	out := make([]int64, len(qs))
	if len(samples) == 0 {
		return out
	}
	slices.Sort(samples)
	for i, q := range qs {
		rank := int(math.Ceil(q * float64(len(samples))))
		rank = min(max(rank, 1), len(samples))
		out[i] = samples[rank-1]
	}
	return out
}
