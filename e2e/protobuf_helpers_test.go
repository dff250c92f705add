package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Helpers of the protobuf tests (protobuf_test.go).

// encodingClient returns a client of the cluster's kubeconfig whose reads ask for enc.
func encodingClient(t *testing.T, enc listwatch.Encoding) *listwatch.Client {
	t.Helper()
	cfg := client(t).Config()
	cfg.Encoding = enc
	c, err := listwatch.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// rawGet sends a GET of path to the apiserver with the kubeconfig's CA and token and the
// given Accept header, and returns the body as it came, with its Content-Type.
func rawGet(t *testing.T, path, accept string) ([]byte, string) {
	t.Helper()
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: shared.cluster.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.TLS.CAData) {
		t.Fatal("no CA certificate in the kubeconfig")
	}
	hc := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %q", path, resp.Status, bodyHead(b))
	}
	return b, resp.Header.Get("Content-Type")
}

// protobufGet returns the envelope of the protobuf the apiserver answers a GET of path
// with: the object's (or list's) own message in Raw.
func protobufGet(t *testing.T, path string) kubeproto.Envelope {
	t.Helper()
	b, ct := rawGet(t, path, "application/vnd.kubernetes.protobuf")
	if !strings.HasPrefix(ct, "application/vnd.kubernetes.protobuf") {
		t.Fatalf("GET %s in protobuf: answered %q: %q", path, ct, bodyHead(b))
	}
	env, err := kubeproto.ParseEnvelope(b)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return env
}

func bodyHead(b []byte) []byte { return b[:min(len(b), 200)] }

// firstDifference describes where two byte strings part, for a failure message.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	window := func(b []byte) []byte { return b[max(0, i-16):min(len(b), i+32)] }
	return fmt.Sprintf("%d bytes, want %d; first difference at offset %d:\n got …%q…\nwant …%q…", len(got), len(want), i, window(got), window(want))
}

// modelled returns a copy of v without its unknown members, heads included: what the
// model holds of an object, to compare objects read in different encodings. (A copy of

var unknownType = reflect.TypeFor[object.Unknown]()

// unknownsOf returns every non-empty Unknown in the object v points to (heads included),
// each with the path of the struct it is in.
func unknownsOf(v any) map[string]object.Unknown {
	out := map[string]object.Unknown{}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == unknownType {
				if u := v.Interface().(object.Unknown); u.Len() > 0 {
					out[path] = u
				} else if _, ok := u.Protobuf(); ok { // Len may count no protobuf fields: keep it anyway
					out[path] = u
				}
				return
			}
			if v.Type() == reflect.TypeFor[object.Time]() {
				return
			}
			for i := range v.NumField() {
				f := v.Field(i)
				if !f.CanInterface() {
					f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
				}
				walk(path+"."+v.Type().Field(i).Name, f)
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() != reflect.Uint8 {
				for i := range v.Len() {
					walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
				}
			}
		}
	}
	walk("", reflect.ValueOf(v))
	return out
}

// checkUnknownsAre fails t unless every unknown-member set in obj is of the encoding
// wanted (protobuf fields, or JSON members), and there is at least one.
func checkUnknownsAre(t *testing.T, what string, obj any, protobuf bool) {
	t.Helper()
	us := unknownsOf(obj)
	if len(us) == 0 {
		t.Errorf("%s: no unknown fields at all (managedFields at least were expected)", what)
	}
	for path, u := range us {
		if _, ok := u.Protobuf(); ok != protobuf {
			t.Errorf("%s: the unknown fields at %q are protobuf=%v, want protobuf=%v: %v", what, path, ok, protobuf, u)
		}
	}
}

// kubectlJSON returns `kubectl get KIND NAME -o json` in ns, decoded.
func kubectlJSON(t *testing.T, ns, kind, name string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(kubectl(t, "-n", ns, "get", kind, name, "-o", "json")), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// cut removes the member at path (dot-separated) from m, and returns its value.
func cut(m map[string]any, path string) any {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	last := parts[len(parts)-1]
	v := m[last]
	delete(m, last)
	return v
}
