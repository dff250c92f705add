package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/selfsigned"
)

// By default the endpoints are served as kube-controller-manager serves them: HTTPS on
// port 10257 of every interface, callers checked; the plain port, which answers anyone,
// only when --metrics-addr names it.
func TestEndpointDefaults(t *testing.T) {
	var f controllerManagerFlags
	if err := f.parse(nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	if f.secureAddr() != "0.0.0.0:10257" {
		t.Errorf("default secure address %q, want 0.0.0.0:10257", f.secureAddr())
	}
	if f.metricsAddr != "" {
		t.Errorf("default --metrics-addr = %q: a port without authentication by default", f.metricsAddr)
	}
	if w := exposure(f.metricsAddr); w != "" {
		t.Errorf("the defaults draw a warning: %s", w)
	}
}

// Flags of the secure port that cannot work are usage errors.
func TestSecurePortFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		secure string // the address, when the flags are valid
		err    string
	}{
		{[]string{"--secure-port", "0"}, "", ""},
		{[]string{"--secure-port", "8443", "--bind-address", "127.0.0.1"}, "127.0.0.1:8443", ""},
		{[]string{"--bind-address", "::1"}, "[::1]:10257", ""},
		{[]string{"--tls-cert-file", "c", "--tls-private-key-file", "k"}, "0.0.0.0:10257", ""},
		{[]string{"--secure-port", "-1"}, "", "--secure-port -1: not a port"},
		{[]string{"--secure-port", "65536"}, "", "--secure-port 65536: not a port"},
		{[]string{"--tls-cert-file", "c"}, "", "go together"},
		{[]string{"--tls-private-key-file", "k"}, "", "go together"},
		{[]string{"--secure-port", "0", "--tls-cert-file", "c", "--tls-private-key-file", "k"}, "", "which is 0"},
	} {
		var f controllerManagerFlags
		err := f.parse(tc.args, io.Discard)
		var ue usageError
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err == "" && f.secureAddr() != tc.secure:
			t.Errorf("%v: secure address %q, want %q", tc.args, f.secureAddr(), tc.secure)
		case tc.err != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.err)
		}
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
	var out, errOut logbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"controller-manager", "--kubeconfig", kc, "--metrics-addr", "0.0.0.0:0", "--secure-port", "0"}, &out, &errOut)
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

// A port already taken (or an address not this machine's) ends controller-manager at
// once, with exit status 1 and a message that names the address and its flag, and does
// not blame the apiserver.
func TestControllerManagerPortTaken(t *testing.T) {
	leakcheck.Check(t)
	_, kc := startSim(t, apisim.Options{})
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--secure-port", "0", "--metrics-addr", addr},
			"cannot listen on " + addr + " (--metrics-addr): bind: address already in use; another process listens there: " +
				`stop it or choose another address with --metrics-addr ("" serves none)`},
		{[]string{"--secure-port", port, "--bind-address", "127.0.0.1"},
			"cannot listen on " + addr + " (--secure-port): bind: address already in use; another process listens there: " +
				"stop it or choose another port with --secure-port (0 serves no HTTPS)"},
		{[]string{"--secure-port", port, "--bind-address", "192.0.2.1"}, // TEST-NET-1: no machine's address
			"cannot listen on 192.0.2.1:" + port + " (--bind-address): bind: cannot assign requested address"},
	} {
		var out, errOut logbuf.Buffer
		err := run(t.Context(), append([]string{"controller-manager", "--kubeconfig", kc}, tc.args...), &out, &errOut)
		if err == nil || err.Error() != tc.want || exitCode(err) != 1 {
			t.Errorf("%v: %v (exit %d), want exit 1 with %q", tc.args, err, exitCode(err), tc.want)
		}
	}
}

// --secure-port serves HTTPS: /healthz to anyone, /metrics to no one without a token
// (kinformer sim answers no TokenReview, so no token gets further); with the certificate
// self-signed, or the one --tls-cert-file names.
func TestControllerManagerSecurePort(t *testing.T) {
	leakcheck.Check(t)
	_, kc := startSim(t, apisim.Options{})
	given, certPEM, err := selfsigned.New("given")
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(given.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		cn   string // of the certificate served
	}{
		{nil, "kinformer-controller-manager"},
		{[]string{"--tls-cert-file", certFile, "--tls-private-key-file", keyFile}, "given"},
	} {
		free, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := free.Addr().String()
		_, port, _ := net.SplitHostPort(addr)
		free.Close()
		ctx, cancel := context.WithCancel(context.Background())
		var out, errOut logbuf.Buffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, append([]string{"controller-manager", "--kubeconfig", kc, "--bind-address", "127.0.0.1", "--secure-port", port}, tc.args...), &out, &errOut)
		}()
		waitForOutput(t, &out, "https://"+addr+"/metrics (callers checked with the apiserver)")
		if strings.Contains(out.String(), "http://") {
			t.Errorf("a plain endpoint without --metrics-addr: %s", out.String())
		}
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // as a scraper of a self-signed port
		for path, want := range map[string]int{"/healthz": 200, "/metrics": 401} {
			resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%v: %s without a token: %d, want %d", tc.args, path, resp.StatusCode, want)
			}
			if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != tc.cn {
				t.Errorf("%v: served the certificate %q, want %q", tc.args, cn, tc.cn)
			}
		}
		tr.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%v: controller-manager ended with %v", tc.args, err)
		}
	}
}
