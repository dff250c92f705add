package simtest

import (
	"testing"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
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

// KubeconfigClient returns a client configured from the kubeconfig file at path, as a
// user's tool would be, whose idle connections are closed when the test ends.
func KubeconfigClient(t testing.TB, path string) *listwatch.Client {
	t.Helper()
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	c, err := listwatch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}
