// Package embedding shows kinformer fed from a source of the embedder's own, with no
// apiserver: its test implements the watch stream (listwatch.Stream) and the clock
// (clock.Clock) itself, runs an informer over them, and a controller (work queue and
// worker loop) over the informer, importing only kinformer's public packages.
//
// Read embedding_test.go: it is the whole example.
package embedding
