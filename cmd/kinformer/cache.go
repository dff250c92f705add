package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// cacheEntry is one line of `cache dump`.
type cacheEntry struct {
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
}

func entryOf(o *object.Raw) cacheEntry {
	return cacheEntry{Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion}
}

func cacheCommand(sub string) command {
	c := command{name: "cache " + sub, synopsis: "RESOURCE " + targetFlags, run: runCache,
		does: "sync an informer of RESOURCE and print its cache as sorted JSON lines (namespace, name, uid, resourceVersion)"}
	if sub == "verify" {
		c.does = "sync an informer of RESOURCE and compare its cache with a fresh consistent list (exit 1 on any difference)"
	}
	return c
}

func runCache(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "dump" && args[0] != "verify") {
		return usageError{cacheCommand("dump").usageLine() + "\n" + cacheCommand("verify").usageLine()}
	}
	cmd := cacheCommand(args[0])
	fs := cmd.flagSet(stderr)
	var t target
	t.flags(fs)
	s, err := t.open(ctx, fs, args[1:], cmd.usageError())
	if err != nil {
		return err
	}
	stop, err := s.start(ctx, stderr)
	defer stop()
	if err != nil || ctx.Err() != nil {
		return err
	}
	if args[0] == "dump" {
		return dump(s.inf, stdout)
	}
	return verify(ctx, s.inf, s.res, t, stdout, stderr)
}

// dump prints the synced cache as sorted JSON lines.
func dump(inf *informer.Informer[*object.Raw], out io.Writer) error {
	objs := inf.Cache().List()
	slices.SortFunc(objs, func(a, b *object.Raw) int { return strings.Compare(object.Key(a), object.Key(b)) })
	enc := json.NewEncoder(out)
	for _, o := range objs {
		if err := enc.Encode(entryOf(o)); err != nil {
			return err
		}
	}
	return nil
}

// errDifferences makes `cache verify` exit 1.
type errDifferences int

func (e errDifferences) Error() string {
	return fmt.Sprintf("%d difference(s) between the cache and the server", int(e))
}

// verify compares the synced cache with the server. It lists at exactly the cache's
// resourceVersion, read with the cache's objects at once, so any difference is a real one
// and nothing is waited for. When the server no longer has that version (compacted: a
// quiet cache's version can be old), it lists the newest state instead and gives the
// informer time to reach it, saying so on progress.
func verify(ctx context.Context, inf *informer.Informer[*object.Raw], res *listwatch.Resource[*object.Raw], t target, out, progress io.Writer) error {
	opts := listwatch.ListOptions{LabelSelector: t.selector, FieldSelector: t.fieldSelector, Limit: 500}
	objs, cacheRV := inf.Cache().Snapshot()
	server, listRV, err := listServer(ctx, res, opts, cacheRV)
	if object.IsGone(err) || cacheRV == "" {
		server, listRV, err = listServer(ctx, res, opts, "")
		if err == nil {
			fmt.Fprintf(progress, "kinformer: the server no longer has the cache's resourceVersion %q: "+
				"listed the newest (%s) and waiting up to 5s for the informer to reach it\n", cacheRV, listRV)
			caughtUp(ctx, inf, listRV)
			objs = inf.Cache().List()
		}
	}
	if err != nil {
		return err
	}
	cache := map[string]cacheEntry{}
	for _, o := range objs {
		cache[object.Key(o)] = entryOf(o)
	}
	diffs := differences(server, cache)
	for _, d := range diffs {
		fmt.Fprintln(out, d)
	}
	fmt.Fprintf(out, "verified %d objects at resourceVersion %s (encoding=%s): %d difference(s)\n", len(server), listRV, res.Encoding(), len(diffs))
	if len(diffs) > 0 {
		return errDifferences(len(diffs))
	}
	return nil
}

// listServer lists the server's objects at exactly rv ("": the newest state) and returns
// them with the list's resourceVersion.
func listServer(ctx context.Context, res *listwatch.Resource[*object.Raw], opts listwatch.ListOptions, rv string) (map[string]cacheEntry, string, error) {
	if rv != "" {
		opts.ResourceVersion, opts.ResourceVersionMatch = rv, "Exact"
	}
	server := map[string]cacheEntry{}
	listRV, err := res.ListAll(ctx, opts, func(l *object.List[*object.Raw]) error {
		for _, o := range l.Items {
			server[object.Key(o)] = entryOf(o)
		}
		return nil
	})
	return server, listRV, err
}

// differences describes, sorted by key, every object missing from the cache, cached but
// not on the server, or cached with another uid or resourceVersion.
func differences(server, cache map[string]cacheEntry) []string {
	var keys []string
	for k := range server {
		keys = append(keys, k)
	}
	for k := range cache {
		if _, ok := server[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		s, inServer := server[k]
		c, inCache := cache[k]
		switch {
		case !inCache:
			out = append(out, fmt.Sprintf("missing from cache: %s (uid %s, rv %s)", k, s.UID, s.ResourceVersion))
		case !inServer:
			out = append(out, fmt.Sprintf("not on server:      %s (uid %s, rv %s)", k, c.UID, c.ResourceVersion))
		case s != c:
			out = append(out, fmt.Sprintf("differs:            %s cache uid %s rv %s, server uid %s rv %s", k, c.UID, c.ResourceVersion, s.UID, s.ResourceVersion))
		}
	}
	return out
}

// caughtUp waits briefly until the informer has seen listRV (resourceVersions of an
// etcd-backed apiserver are increasing integers; anything else is compared as is).
func caughtUp(ctx context.Context, inf *informer.Informer[*object.Raw], listRV string) {
	for range 100 {
		seen := inf.Status().LastSyncResourceVersion
		if len(seen) > len(listRV) || len(seen) == len(listRV) && seen >= listRV || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
