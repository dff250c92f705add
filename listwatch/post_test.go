package listwatch_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Post sends the body as JSON with the client's credential to the path under the
// server's base URL, returns the answer, and turns an error answer into a StatusError.
func TestPost(t *testing.T) {
	type seen struct{ Method, Path, ContentType, Auth, Body string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(b)})
		if r.URL.Path == "/prefix/apis/authorization.k8s.io/v1/subjectaccessreviews" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"no"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"status":{"authenticated":true}}`)
	}))
	defer srv.Close()
	c, err := listwatch.New(&listwatch.Config{Host: srv.URL + "/prefix", BearerToken: "manager-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx := context.Background()

	b, err := c.Post(ctx, "/apis/authentication.k8s.io/v1/tokenreviews", []byte(`{"spec":{"token":"t"}}`))
	if err != nil || string(b) != `{"status":{"authenticated":true}}` {
		t.Errorf("tokenreviews: %s, %v", b, err)
	}
	if _, err := c.Post(ctx, "/apis/authorization.k8s.io/v1/subjectaccessreviews", []byte(`{}`)); !object.IsForbidden(err) {
		t.Errorf("subjectaccessreviews: %v, want the server's 403", err)
	}
	if _, err := c.Post(ctx, "apis/x", nil); err == nil {
		t.Error("a relative path was accepted")
	}
	want := []seen{
		{"POST", "/prefix/apis/authentication.k8s.io/v1/tokenreviews", "application/json", "Bearer manager-token", `{"spec":{"token":"t"}}`},
		{"POST", "/prefix/apis/authorization.k8s.io/v1/subjectaccessreviews", "application/json", "Bearer manager-token", `{}`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}
