package listwatch_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// secrets are the credentials of a test, each a value that must appear in no message.
type secrets struct {
	token     string // bearer token
	keyPEM    []byte // client key
	certPEM   []byte // its certificate (public, but needed with the key)
	envValue  string // an exec plugin's environment value
	argValue  string // an exec plugin's argument
	echoedJWT string // the token a failing plugin prints on stderr, never seen otherwise
}

func newSecrets(t *testing.T) secrets {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "user"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return secrets{
		token:    "bearer-" + rand.Text(),
		keyPEM:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		envValue: "env-" + rand.Text(),
		argValue: "arg-" + rand.Text(),
		// A service-account JWT's shape: its header always holds digits and letters.
		echoedJWT: "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ." + rand.Text() + "." + rand.Text(),
	}
}

// leaks returns the secrets that text shows: whole, or any line of the key, or the key
// in base64 (as JSON shows bytes).
func (s secrets) leaks(text string) []string {
	var found []string
	for _, v := range []string{s.token, s.envValue, s.argValue, s.echoedJWT, base64.StdEncoding.EncodeToString(s.keyPEM)} {
		if strings.Contains(text, v) {
			found = append(found, v)
		}
	}
	for line := range strings.Lines(string(s.keyPEM)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "-----") && strings.Contains(text, line) {
			found = append(found, "a line of the client key")
		}
	}
	return found
}

func (s secrets) config(host string) *listwatch.Config {
	return &listwatch.Config{Host: host, BearerToken: s.token, QPS: -1,
		TLS: listwatch.TLSConfig{CertData: s.certPEM, KeyData: s.keyPEM, ServerName: "api.example"}}
}

// execConfig runs a plugin that fails and prints on stderr the token it has cached.
func (s secrets) execConfig(t *testing.T) *listwatch.ExecConfig {
	t.Helper()
	script := filepath.Join(t.TempDir(), "plugin.sh")
	body := "#!/bin/sh\necho \"error: cached token $CACHED_TOKEN was rejected; refreshing with $1 failed\" >&2\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return &listwatch.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: script,
		Args: []string{"--client-secret=" + s.argValue},
		Env:  []listwatch.ExecEnvVar{{Name: "CACHED_TOKEN", Value: s.echoedJWT}, {Name: "OTHER", Value: s.envValue}}}
}

// TestConfigPrintsNoSecret: however a Config is printed or logged, its credentials are
// not in the output, and what helps a reader (host, names, sizes) is.
func TestConfigPrintsNoSecret(t *testing.T) {
	s := newSecrets(t)
	cfg := s.config("https://127.0.0.1:6443")
	cfg.Exec = s.execConfig(t)
	var out strings.Builder
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		fmt.Fprintf(&out, format+"\n", cfg)
		fmt.Fprintf(&out, format+"\n", *cfg)
		fmt.Fprintf(&out, format+"\n", cfg.TLS)
		fmt.Fprintf(&out, format+"\n", cfg.Exec)
	}
	out.WriteString(cfg.String() + cfg.GoString())
	c, err := listwatch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	fmt.Fprintf(&out, "%v %+v %#v\n", c, c, c)
	for _, h := range []slog.Handler{slog.NewTextHandler(&out, nil), slog.NewJSONHandler(&out, nil)} {
		slog.New(h).Info("connecting", "config", cfg, "value", *cfg)
	}
	text := out.String()
	if leaked := s.leaks(text); len(leaked) > 0 {
		t.Errorf("printed configurations show %q:\n%s", leaked, text)
	}
	for _, want := range []string{"127.0.0.1:6443", "[redacted]", "api.example", "CACHED_TOKEN", "plugin.sh", fmt.Sprintf("%d bytes", len(s.certPEM))} {
		if !strings.Contains(text, want) {
			t.Errorf("printed configurations do not show %q:\n%s", want, text)
		}
	}
}

// TestKubeconfigUserPrintsNoSecret: a kubeconfig's users print redacted too.
func TestKubeconfigUserPrintsNoSecret(t *testing.T) {
	s := newSecrets(t)
	kc, err := listwatch.ParseKubeconfig([]byte(fmt.Sprintf(`users: [{name: u, user: {token: %s, client-key-data: %s, username: admin}}]`,
		s.token, s.echoedJWT)), "")
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("%v %+v %#v %+v", kc, kc.Users, kc.Users["u"], *kc.Users["u"])
	if leaked := s.leaks(text); len(leaked) > 0 || !strings.Contains(text, "admin") {
		t.Errorf("printed kubeconfig user shows %q (and should show its username):\n%s", leaked, text)
	}
}

// TestEveryConfigFieldIsClassified guards the redaction against new fields: each
// string-like field of Config is filled with a marker, and its marker must be printed
// exactly when the field is listed here as not secret. A new field fails this test
// until someone decides which it is.
func TestEveryConfigFieldIsClassified(t *testing.T) {
	printed := map[string]bool{
		"Host": true, "Namespace": true, "BearerTokenFile": true, "UserAgent": true, "Encoding": true,
		"TLS.ServerName": true, "Exec.APIVersion": true, "Exec.Command": true,
		"Exec.InstallHint": true, "Exec.InteractiveMode": true, "Exec.Env.Name": true,
		// Secret, or shown only as a size: BearerToken, TLS.CAData, TLS.CertData,
		// TLS.KeyData, Exec.Args, Exec.Env.Value.
	}
	check := func(name string, v any) {
		markers := map[string]string{}
		fill(reflect.ValueOf(v).Elem(), "", markers)
		text := fmt.Sprintf("%v %+v %#v", v, v, v)
		for path, marker := range markers {
			switch shown := strings.Contains(text, marker); {
			case shown && !printed[path]:
				t.Errorf("%s.%s is printed: redact it in its Format method, or list it here if it is no secret", name, path)
			case !shown && printed[path]:
				t.Errorf("%s.%s is not printed, but listed as printed", name, path)
			}
		}
	}
	check("Config", &listwatch.Config{})
	printed = map[string]bool{
		"TokenFile": true, "ClientCertificate": true, "ClientCertificateData": true, "ClientKey": true,
		"Username": true, "Exec.APIVersion": true, "Exec.Command": true, "Exec.InstallHint": true,
		"Exec.InteractiveMode": true, "Exec.Env.Name": true,
		// Secret: Token, ClientKeyData, Password, Exec.Args, Exec.Env.Value. (AuthProvider
		// prints as a pointer.)
	}
	check("KubeUser", &listwatch.KubeUser{})
}

// fill sets every string, []byte and []string reachable from v (through structs,
// pointers to structs and slices of structs) to a marker naming its path, and records
// the markers.
func fill(v reflect.Value, path string, markers map[string]string) {
	marker := "mark." + path + ".end" // closed, so that no marker contains another
	switch {
	case v.Kind() == reflect.String:
		v.SetString(marker)
		markers[path] = marker
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		v.SetBytes([]byte(marker))
		markers[path] = marker
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		v.Set(reflect.ValueOf([]string{marker}).Convert(v.Type()))
		markers[path] = marker
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), path, markers)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), path, markers)
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fill(v.Field(i), strings.TrimPrefix(path+"."+f.Name, "."), markers)
			}
		}
	}
}

// TestCredentialsInServerURLAreRefused: a password in the server URL would travel as
// basic authentication and be printed with every URL; it is refused, without being
// repeated in the error. So is a kubeconfig user with a password.
func TestCredentialsInServerURLAreRefused(t *testing.T) {
	const password = "hunter2-correct-horse"
	for _, host := range []string{"https://admin:" + password + "@127.0.0.1:6443", "https://admin:" + password + "@127.0.0.1:bad port"} {
		_, err := listwatch.New(&listwatch.Config{Host: host})
		if err == nil || strings.Contains(err.Error(), password) {
			t.Errorf("host with a password: error %v, want a refusal that does not repeat it", err)
		}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	doc := `current-context: c
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {username: admin, password: ` + password + `}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: path})
	if err == nil || !strings.Contains(err.Error(), "basic authentication") || strings.Contains(err.Error(), password) {
		t.Errorf("user with a password: error %v, want a refusal naming basic authentication, without the password", err)
	}
}

// echoServer answers every request with code and a body that repeats the request's
// Authorization header, as a debugging proxy might: once as a Status, once as text.
func echoServer(t *testing.T, code int, asStatus bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		if asStatus {
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"refused: you sent %s","code":%d}`, r.Header.Get("Authorization"), code)
			return
		}
		fmt.Fprintf(w, "refused, headers were %v", r.Header)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFailuresLeakNoSecret: every text a failing request produces — the error of a list
// and of both kinds of watch, an informer's sync status, WaitForSync's error and the
// informer metrics — is free of credentials, whatever the failure.
func TestFailuresLeakNoSecret(t *testing.T) {
	s := newSecrets(t)
	tlsSrv, _ := tlsServer(t)
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := refused.Addr().String()
	refused.Close()

	failures := []struct {
		name string
		cfg  *listwatch.Config
		want string // what the error must still say
	}{
		{"401 that echoes the token", s.config(echoServer(t, http.StatusUnauthorized, true)), "401"},
		{"403 that echoes the headers", s.config(echoServer(t, http.StatusForbidden, false)), "403"},
		{"connection refused", s.config("https://" + refusedAddr), "connection refused"},
		{"TLS verification", s.config(tlsSrv.URL), "failed to verify certificate"},
		{"exec plugin failure that prints the token", &listwatch.Config{Host: echoServer(t, http.StatusUnauthorized, true),
			Exec: s.execConfig(t), QPS: -1}, "was rejected"},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			leakcheck.Check(t)
			c, err := listwatch.New(f.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			var texts []string
			for _, rq := range requests {
				err := rq.do(context.Background(), podsOf(c))
				if err == nil || !strings.Contains(err.Error(), f.want) {
					t.Errorf("%s: error %v, want one saying %q", rq.name, err, f.want)
				}
				texts = append(texts, fmt.Sprintf("%s: %v", rq.name, err))
			}
			texts = append(texts, informerTexts(t, c)...)
			text := strings.Join(texts, "\n")
			if leaked := s.leaks(text); len(leaked) > 0 {
				t.Errorf("the failure shows %q:\n%s", leaked, text)
			}
			t.Logf("what a user sees:\n%s", text)
		})
	}
}

// informerTexts runs an informer of pods on c until its first failure and returns what
// it reports: the sync status, WaitForSync's error and the metrics.
func informerTexts(t *testing.T, c *listwatch.Client) []string {
	t.Helper()
	reg := prometheus.NewRegistry()
	metrics, err := informer.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := informer.New(podsOf(c), informer.Options[*object.Pod]{Name: "pods", Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan struct{})
	var once sync.Once
	defer inf.OnStatus(func(s informer.SyncStatus) {
		if s.LastError != nil {
			once.Do(func() { close(failed) })
		}
	})()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case <-failed:
	case <-time.After(10 * time.Second):
		t.Fatalf("the informer reported no failure in 10 s; status: %+v", inf.Status())
	}
	wctx, wcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer wcancel()
	waitErr := informer.WaitForSync(wctx, inf)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	for _, f := range families {
		m.WriteString(f.String())
	}
	return []string{fmt.Sprintf("status: %+v", inf.Status()), fmt.Sprintf("WaitForSync: %v", waitErr), "metrics: " + m.String()}
}
