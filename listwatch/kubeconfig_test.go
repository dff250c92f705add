package listwatch

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const kubeconfigA = `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: ca
  cluster: {server: "https://a.example:6443", certificate-authority: certs/ca.pem}
- name: shared
  cluster: {server: "https://from-a.example"}
users:
- name: ua
  user: {tokenFile: tok}
contexts:
- name: a
  context: {cluster: ca, user: ua, namespace: team-a}
`

const kubeconfigB = `apiVersion: v1
kind: Config
current-context: b
clusters:
- name: cb
  cluster: {server: "https://b.example", insecure-skip-tls-verify: true, tls-server-name: api.b}
- name: shared
  cluster: {server: "https://from-b.example"}
users:
- name: ub
  user: {token: tok-b, client-certificate-data: %s, client-key-data: %s}
contexts:
- name: b
  context: {cluster: cb, user: ub}
- name: s
  context: {cluster: shared}
`

func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "certs"), 0o700)
	writeFile(t, dir, "certs/ca.pem", "CA-PEM")
	a := writeFile(t, dir, "a.yaml", kubeconfigA)
	cert, key := base64.StdEncoding.EncodeToString([]byte("CERT")), base64.StdEncoding.EncodeToString([]byte("KEY"))
	b := writeFile(t, dir, "b.yaml", strings.NewReplacer("%s, client-key-data: %s", cert+", client-key-data: "+key).Replace(kubeconfigB))
	env := func(kc string) func(string) string {
		return func(k string) string {
			if k == "KUBECONFIG" {
				return kc
			}
			return ""
		}
	}
	tests := []struct {
		name string
		opts LoadOptions
		want Config
	}{
		{"explicit path, relative CA file and token file", LoadOptions{Path: a},
			Config{Host: "https://a.example:6443", Namespace: "team-a", BearerTokenFile: filepath.Join(dir, "tok"), TLS: TLSConfig{CAData: []byte("CA-PEM")}}},
		{"KUBECONFIG list: first current-context wins", LoadOptions{Getenv: env(b + string(os.PathListSeparator) + a)},
			Config{Host: "https://b.example", BearerToken: "tok-b", TLS: TLSConfig{Insecure: true, ServerName: "api.b", CertData: []byte("CERT"), KeyData: []byte("KEY")}}},
		{"KUBECONFIG list: first definition of a name wins", LoadOptions{Getenv: env(a + string(os.PathListSeparator) + b), Context: "s"},
			Config{Host: "https://from-a.example"}},
		{"missing files in KUBECONFIG are skipped", LoadOptions{Getenv: env(filepath.Join(dir, "nope") + string(os.PathListSeparator) + a)},
			Config{Host: "https://a.example:6443", Namespace: "team-a", BearerTokenFile: filepath.Join(dir, "tok"), TLS: TLSConfig{CAData: []byte("CA-PEM")}}},
		{"home default", LoadOptions{Getenv: env(""), Home: homeWith(t, kubeconfigA, dir)},
			Config{Host: "https://a.example:6443", Namespace: "team-a", BearerTokenFile: filepath.Join(dir, "home", ".kube", "tok"), TLS: TLSConfig{CAData: []byte("CA-PEM")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadKubeconfig(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, *got); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
}

// homeWith writes kc as HOME/.kube/config (with its relative CA beside it).
func homeWith(t *testing.T, kc, dir string) string {
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, ".kube", "certs"), 0o700)
	writeFile(t, filepath.Join(home, ".kube"), "config", kc)
	writeFile(t, filepath.Join(home, ".kube"), "certs/ca.pem", "CA-PEM")
	return home
}

func TestLoadKubeconfigErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, doc, context, want string }{
		{"no current context", "clusters: []", "", "no current-context"},
		{"unknown context", kubeconfigA, "zzz", `no context "zzz"`},
		{"context names a missing cluster", "current-context: x\ncontexts: [{name: x, context: {cluster: nope}}]", "", `cluster "nope"`},
		{"bad base64", "current-context: x\nclusters: [{name: c, cluster: {server: 'https://x', certificate-authority-data: '!!'}}]\ncontexts: [{name: x, context: {cluster: c}}]", "", "base64"},
		{"bad yaml", "clusters: [", "", "parsing kubeconfig"},
		{"bad server", "current-context: x\nclusters: [{name: c, cluster: {server: 'ftp://x'}}]\ncontexts: [{name: x, context: {cluster: c}}]", "", "scheme"},
		{"auth provider", "current-context: x\nclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {auth-provider: {name: gcp}}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]", "", "auth-provider"},
		{"cert without key", "current-context: x\nclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {client-certificate-data: Q0VSVA==}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]", "", "client key"},
		{"old exec api", "current-context: x\nclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]", "", "not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, dir, "kc", tt.doc)
			_, err := LoadKubeconfig(LoadOptions{Path: p, Context: tt.context})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if _, err := LoadKubeconfig(LoadOptions{Path: filepath.Join(dir, "missing")}); err == nil {
		t.Error("an explicit missing file is an error")
	}
}

func TestExecCredentialPlugin(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "runs")
	script := writeFile(t, dir, "plugin.sh", `#!/bin/sh
echo run >> `+counter+`
case "$KUBERNETES_EXEC_INFO" in *'"interactive":false'*) ;; *) echo "bad exec info: $KUBERNETES_EXEC_INFO" >&2; exit 1;; esac
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"'$PLUGIN_TOKEN'","expirationTimestamp":"2999-01-01T00:00:00Z"}}'
`)
	os.Chmod(script, 0o755)
	p := newExecProvider(&ExecConfig{APIVersion: execAPIVersion, Command: script, Env: []ExecEnvVar{{Name: "PLUGIN_TOKEN", Value: "from-plugin"}}}, "https://x", 0)
	for range 3 {
		tok, _, err := p.credential(context.Background())
		if err != nil || tok != "from-plugin" {
			t.Fatalf("token %q, %v", tok, err)
		}
	}
	runs, _ := os.ReadFile(counter)
	if n := strings.Count(string(runs), "run"); n != 1 {
		t.Errorf("plugin ran %d times, want 1 (cached until expiry)", n)
	}
	p.invalidate()
	p.credential(context.Background())
	runs, _ = os.ReadFile(counter)
	if n := strings.Count(string(runs), "run"); n != 2 {
		t.Errorf("after a 401 the plugin must run again; ran %d times", n)
	}
	failing := writeFile(t, dir, "fail.sh", "#!/bin/sh\necho boom >&2\nexit 3\n")
	os.Chmod(failing, 0o755)
	_, _, err := newExecProvider(&ExecConfig{APIVersion: execAPIVersion, Command: failing, InstallHint: "install it"}, "", 0).credential(context.Background())
	if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "install it") {
		t.Errorf("failing plugin: %v", err)
	}
}

func TestInClusterConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "token", "sa-token\n")
	writeFile(t, dir, "ca.crt", "CA")
	writeFile(t, dir, "namespace", "kube-system\n")
	env := map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	cfg, err := InClusterConfig(InClusterOptions{Getenv: func(k string) string { return env[k] }, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Host: "https://10.0.0.1:443", Namespace: "kube-system", BearerTokenFile: filepath.Join(dir, "token"), TLS: TLSConfig{CAData: []byte("CA")}}
	if d := cmp.Diff(want, *cfg); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	a := &authenticator{tokenFile: cfg.BearerTokenFile}
	if h, _ := a.header(context.Background()); h != "Bearer sa-token" {
		t.Errorf("header %q", h)
	}
	if _, err := InClusterConfig(InClusterOptions{Getenv: func(string) string { return "" }, Dir: dir}); err == nil {
		t.Error("outside a cluster: want an error")
	}
}

// FuzzKubeconfig: no input may panic the loader; whatever loads is a usable Config.
func FuzzKubeconfig(f *testing.F) {
	f.Add([]byte(kubeconfigA), "")
	f.Add([]byte(kubeconfigB), "s")
	f.Add([]byte("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\nclusters: [{name: c, cluster: {server: 'http://h'}}]"), "x")
	f.Add([]byte("users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}}]"), "")
	f.Add([]byte("{"), "")
	f.Fuzz(func(t *testing.T, data []byte, context string) {
		kc, err := ParseKubeconfig(data, "")
		if err != nil {
			return
		}
		// Files named by fuzzed input (/dev/zero, ...) are not the loader's to read here.
		for _, c := range kc.Clusters {
			if c.CertificateAuthority != "" {
				return
			}
		}
		for _, u := range kc.Users {
			if u.TokenFile != "" || u.ClientCertificate != "" || u.ClientKey != "" {
				return
			}
		}
		cfg, err := kc.Config(context)
		if err != nil {
			return
		}
		if _, err := cfg.validate(); err != nil {
			t.Fatalf("Config returned an invalid configuration: %v", err)
		}
	})
}
