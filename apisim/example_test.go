package apisim_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/kinformer/kinformer/apisim"
)

func Example() {
	sim := apisim.New(apisim.Options{})
	url, _ := sim.Start("127.0.0.1:0")
	defer sim.Close()
	defer http.DefaultClient.CloseIdleConnections()

	body := `{"metadata":{"name":"settings"},"data":{"mode":"fast"}}`
	resp, _ := http.Post(url+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	resp.Body.Close()
	fmt.Println(resp.Status)

	// A watch from a compacted revision answers with a 410 ERROR event.
	sim.Compact()
	_, _ = http.Post(url+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(`{"metadata":{"name":"b"}}`))
	resp, _ = http.Get(url + "/api/v1/configmaps?watch=1&resourceVersion=1")
	line, _ := io.ReadAll(io.LimitReader(resp.Body, 25))
	resp.Body.Close()
	fmt.Println(string(line))
	// Output:
	// 201 Created
	// {"type":"ERROR","object":
}
