// Package memlimit is the --memory-limit flag of kinformer's programs (the benchmark
// runners, kinformer controller-manager): a size in bytes ("2684354560") or with a unit
// ("2.5GiB", "2500MB", "3G"), applied with runtime/debug.SetMemoryLimit, the soft limit
// GOMEMLIMIT sets. A program chooses to set it; the library packages never set the
// garbage collector's knobs, which belong to the program that embeds them.
//
// It serves no step of the data path. It sits in internal/ beside the engine's parts, not
// among the test rigs of internal/testrig, because programs import it (cmd/kinformer and
// the benchmark's runners), not tests.
package memlimit
