package pipelinebench

// B is the part of *testing.B the benchmarks use.
type B interface {
	ReportAllocs()
	ResetTimer()
	StopTimer()
	SetBytes(n int64)
	ReportMetric(n float64, unit string)
	Fatal(args ...any)
}
