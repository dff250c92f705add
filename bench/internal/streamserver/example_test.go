package streamserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/kinformer/kinformer/bench/internal/streamserver"
)

// Start a server in-process, list a page of pods and read two watch events.
func Example() {
	s, err := streamserver.New(streamserver.Options{Profile: "pods", Objects: 100, WatchEvents: 2})
	if err != nil {
		panic(err)
	}
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer s.Close()

	resp, err := http.Get(url + "/api/v1/namespaces/bench/pods?limit=40")
	if err != nil {
		panic(err)
	}
	var list struct {
		Kind     string
		Metadata struct {
			ResourceVersion    string
			RemainingItemCount int
		}
		Items []json.RawMessage
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil {
		panic(err)
	}
	fmt.Println(list.Kind, list.Metadata.ResourceVersion, len(list.Items), list.Metadata.RemainingItemCount)

	resp, err = http.Get(url + "/api/v1/namespaces/bench/pods?watch=1&resourceVersion=" + list.Metadata.ResourceVersion)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for range 2 {
		var ev struct {
			Type   string
			Object struct {
				Metadata struct{ ResourceVersion string }
			}
		}
		if err := dec.Decode(&ev); err != nil {
			panic(err)
		}
		fmt.Println(ev.Type, ev.Object.Metadata.ResourceVersion)
	}
	// Output:
	// PodList 48210100 40 60
	// MODIFIED 48210101
	// MODIFIED 48210102
}
