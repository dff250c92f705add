package listwatch_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// tlsServer is an apiserver over TLS (HTTP/2 offered) with httptest's own certificate,
// issued by "O=Acme Co", that serves an empty pod list and watches (chunked or
// websocket) that end at once. It returns the server and its CA as PEM.
func tlsServer(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	leakcheck.Check(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if websocket.IsWebSocketUpgrade(r) {
			up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
			if conn, err := up.Upgrade(w, r, nil); err == nil {
				conn.Close()
			}
			return
		}
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	}))
	srv.EnableHTTP2 = true
	// The refused handshakes are the point of these tests, not news for their log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// otherCA is a certificate authority that signed nothing the server has.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "some other cluster's CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func podsOf(c *listwatch.Client) *listwatch.Resource[*object.Pod] {
	return listwatch.For[*object.Pod](c, listwatch.ResourceInfo{GroupVersionResource: listwatch.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}, "default")
}

// requests are the three ways a client meets the server's certificate.
var requests = []struct {
	name string
	do   func(context.Context, *listwatch.Resource[*object.Pod]) error
}{
	{"list", func(ctx context.Context, r *listwatch.Resource[*object.Pod]) error {
		_, err := r.List(ctx, listwatch.ListOptions{})
		return err
	}},
	{"chunked watch", func(ctx context.Context, r *listwatch.Resource[*object.Pod]) error {
		w, err := r.Watch(ctx, listwatch.WatchOptions{})
		if err == nil {
			w.Close()
		}
		return err
	}},
	{"websocket watch", func(ctx context.Context, r *listwatch.Resource[*object.Pod]) error {
		w, err := r.Watch(ctx, listwatch.WatchOptions{WebSocket: true})
		if err == nil {
			w.Close()
		}
		return err
	}},
}

func newClient(t *testing.T, cfg *listwatch.Config) *listwatch.Client {
	t.Helper()
	c, err := listwatch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestWrongCAFailsAndSaysWhy: a server whose certificate the configured CA did not sign
// is refused on every kind of request, and the error names the server's host:port, the
// problem, the authority that issued the server's certificate and the one trusted.
func TestWrongCAFailsAndSaysWhy(t *testing.T) {
	srv, _ := tlsServer(t)
	hostPort := strings.TrimPrefix(srv.URL, "https://")
	cases := []struct {
		name string
		ca   []byte
		want []string
	}{
		{"another cluster's CA", otherCA(t), []string{hostPort, "x509: certificate signed by unknown authority",
			`issued by "O=Acme Co"`, `the configured certificate-authority trusts only "CN=some other cluster's CA"`}},
		{"no CA: the system's", nil, []string{hostPort, "x509: certificate signed by unknown authority",
			`issued by "O=Acme Co"`, "names no certificate-authority", "system's trusted authorities"}},
	}
	for _, tc := range cases {
		c := newClient(t, &listwatch.Config{Host: srv.URL, TLS: listwatch.TLSConfig{CAData: tc.ca}})
		for _, rq := range requests {
			err := rq.do(context.Background(), podsOf(c))
			if err == nil {
				t.Errorf("%s, %s: no error", tc.name, rq.name)
				continue
			}
			t.Logf("%s, %s: %v", tc.name, rq.name, err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s, %s: error does not say %q:\n%v", tc.name, rq.name, w, err)
				}
			}
		}
	}
}

// TestRightCAAndInsecureSucceed: the refusals above come from verification, not from a
// server that cannot be reached: the server's own CA and insecure-skip-tls-verify pass.
func TestRightCAAndInsecureSucceed(t *testing.T) {
	srv, ca := tlsServer(t)
	for name, tlsc := range map[string]listwatch.TLSConfig{
		"the server's CA":          {CAData: ca},
		"insecure-skip-tls-verify": {Insecure: true},
	} {
		c := newClient(t, &listwatch.Config{Host: srv.URL, TLS: tlsc})
		for _, rq := range requests {
			if err := rq.do(context.Background(), podsOf(c)); err != nil {
				t.Errorf("%s, %s: %v", name, rq.name, err)
			}
		}
	}
}

// TestWrongNameSaysTLSServerName: a certificate from the right CA for another name is
// refused, and the error points at tls-server-name.
func TestWrongNameSaysTLSServerName(t *testing.T) {
	srv, ca := tlsServer(t)
	c := newClient(t, &listwatch.Config{Host: srv.URL, TLS: listwatch.TLSConfig{CAData: ca, ServerName: "api.elsewhere.example"}})
	err := requests[0].do(context.Background(), podsOf(c))
	if err == nil || !strings.Contains(err.Error(), "certificate is valid for") || !strings.Contains(err.Error(), "tls-server-name") {
		t.Errorf("error %v, want the names the certificate is valid for and a hint at tls-server-name", err)
	}
}

// TestKubeconfigVerifiesUnlessInsecure: a kubeconfig whose certificate-authority did not
// sign the server's certificate fails; only insecure-skip-tls-verify turns the check off.
func TestKubeconfigVerifiesUnlessInsecure(t *testing.T) {
	srv, _ := tlsServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), otherCA(t), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, insecure := range []bool{false, true} {
		doc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: c
clusters: [{name: c, cluster: {server: %q, certificate-authority: ca.crt, insecure-skip-tls-verify: %v}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
`, srv.URL, insecure)
		path := filepath.Join(dir, "kubeconfig")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		err = requests[0].do(context.Background(), podsOf(newClient(t, cfg)))
		switch {
		case !insecure && (err == nil || !strings.Contains(err.Error(), "unknown authority")):
			t.Errorf("certificate-authority of another cluster: error %v, want unknown authority", err)
		case insecure && err != nil:
			t.Errorf("insecure-skip-tls-verify: %v", err)
		}
	}
}
