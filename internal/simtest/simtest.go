// Package simtest starts a simulated apiserver and a client for it in tests, and checks
// that the test leaves no goroutine behind.
package simtest

import (
	"testing"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/leakcheck"
	"github.com/kinformer/kinformer/listwatch"
)

// Start runs a simulator and an unthrottled client for it. Both are closed when the test
// ends, after which the test fails if any goroutine it started is still running.
func Start(t testing.TB, opts apisim.Options) (*apisim.Server, *listwatch.Client) {
	t.Helper()
	leakcheck.Check(t) // registered first, so it runs after the closes below
	sim := apisim.New(opts)
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := listwatch.New(&listwatch.Config{Host: url, BearerToken: opts.Token, QPS: -1})
	if err != nil {
		sim.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.CloseIdleConnections()
		sim.Close()
	})
	return sim, c
}
