package consistency_test

import (
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/controllers/consistency"
)

// cache stands for an informer: how far it has followed the server.
type cache struct{ rv string }

func (c *cache) LastStoreSyncResourceVersion() string { return c.rv }

// A sync writes a ReplicaSet's status; the next sync must wait until the informer has
// delivered that write.
func Example() {
	rsCache := &cache{rv: "100"}
	store := consistency.New(map[string]consistency.Source{"replicasets.apps": rsCache})
	web := consistency.Owner{Key: "default/web", UID: "uid-1"}

	// The status patch answered with resourceVersion 105.
	store.WroteAt(web, "replicasets.apps", "105")

	var stale *consistency.StaleError
	if err := store.Ready(web); errors.As(err, &stale) {
		fmt.Println("skip the sync:", stale.Resource, "cache at", stale.Read, "< write at", stale.Wrote)
	}
	rsCache.rv = "107" // the watch delivered the write, and more
	fmt.Println("ready:", store.Ready(web) == nil, "records left:", store.Len())
	// Output:
	// skip the sync: replicasets.apps cache at 100 < write at 105
	// ready: true records left: 0
}
