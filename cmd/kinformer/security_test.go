package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/leakcheck"
)

// The endpoints of controller-manager answer without authentication: by default they
// listen on loopback only, where nothing from another machine reaches them.
func TestMetricsAddrIsLoopbackByDefault(t *testing.T) {
	var f controllerManagerFlags
	if err := f.parse(nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	if f.metricsAddr != "127.0.0.1:10257" {
		t.Errorf("default --metrics-addr = %q, want 127.0.0.1:10257", f.metricsAddr)
	}
	host, _, err := net.SplitHostPort(f.metricsAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Errorf("default --metrics-addr %q is not a loopback address", f.metricsAddr)
	}
	if w := exposure(f.metricsAddr); w != "" {
		t.Errorf("the default address draws a warning: %s", w)
	}
}

// Another interface is used only when --metrics-addr names it, and then with a warning.
func TestMetricsAddrElsewhereOnlyWhenAsked(t *testing.T) {
	for addr, exposed := range map[string]bool{
		"0.0.0.0:10257":   true,
		":10257":          true, // every interface
		"10.1.2.3:10257":  true,
		"[::]:10257":      true,
		"127.0.0.1:10257": false,
		"[::1]:10257":     false,
		"localhost:10257": false,
		"":                false, // no server at all
	} {
		var f controllerManagerFlags
		if err := f.parse([]string{"--metrics-addr", addr}, io.Discard); err != nil {
			t.Fatal(err)
		}
		if f.metricsAddr != addr {
			t.Errorf("--metrics-addr %q became %q", addr, f.metricsAddr)
		}
		if w := exposure(addr); (w != "") != exposed {
			t.Errorf("--metrics-addr %q: warning %q, want one: %v", addr, w, exposed)
		}
	}
}

// Asked for every interface, the manager listens there and says so on stderr.
func TestControllerManagerWarnsWhenExposed(t *testing.T) {
	leakcheck.Check(t)
	_, kc := startSim(t, apisim.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"controller-manager", "--kubeconfig", kc, "--metrics-addr", "0.0.0.0:0"}, &out, &errOut)
	}()
	waitForOutput(t, &out, "/metrics")
	if !strings.Contains(errOut.String(), "without authentication on 0.0.0.0:0") {
		t.Errorf("no warning on stderr:\n%s", errOut.String())
	}
	// The printed address is the wildcard one, reachable through loopback too.
	_, addr, _ := strings.Cut(out.String(), "http://")
	addr, _, _ = strings.Cut(addr, "/metrics")
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("no address in %q: %v", out.String(), err)
	}
	if host, _, _ := net.SplitHostPort(addr); host != "::" && host != "0.0.0.0" {
		t.Errorf("listening on %q, want every interface", addr)
	}
	resp, err := http.Get("http://127.0.0.1:" + port + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("controller-manager ended with %v", err)
	}
}
