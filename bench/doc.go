// Package bench holds kinformer's benchmark harnesses. Each harness drives an
// implementation through a small interface, so kinformer and client-go run the very same
// code side by side in one `go test -bench` run (the client-go side lives in the separate
// module bench/clientgo, so the engine's go.mod never names k8s.io).
//
//   - queuebench: work queue Add/Get/Done throughput with 1, 8 and 64 workers, and
//     AddAfter with 100,000 items pending.
//
// Run `make bench` for kinformer alone and `make bench-compare` for the side-by-side run.
package bench
