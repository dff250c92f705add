package measure_test

import (
	"fmt"

	"github.com/kinformer/kinformer/bench/measure"
)

// Percentiles are exact, by nearest rank: the p99 of 1000 samples is the 990th smallest.
func ExamplePercentiles() {
	latencies := make([]int64, 0, 1000) // nanoseconds
	for i := 1000; i >= 1; i-- {
		latencies = append(latencies, int64(i)*1000)
	}
	p := measure.Percentiles(latencies, 0.50, 0.99, 0.999)
	fmt.Printf("p50 %dµs, p99 %dµs, p99.9 %dµs\n", p[0]/1000, p[1]/1000, p[2]/1000)
	// Output: p50 500µs, p99 990µs, p99.9 999µs
}

// The stream server stamps each event with its send time; list items carry zeros.
func ExampleSentUnixNano() {
	sent, ok := measure.SentUnixNano(map[string]string{measure.SentAnnotation: "1763840000123456789"})
	fmt.Println(sent, ok)
	_, ok = measure.SentUnixNano(map[string]string{measure.SentAnnotation: "0000000000000000000"})
	fmt.Println(ok)
	// Output:
	// 1763840000123456789 true
	// false
}
