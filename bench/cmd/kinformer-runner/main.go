// Command kinformer-runner is kinformer's runner of the end-to-end list/watch benchmark:
// it builds a kinformer informer as asked by its flags and lets package bench/measure
// time it and print the one JSON result line. Its twin,
// bench/clientgo/cmd/clientgo-runner, does the same with client-go; the flags and the
// measuring code are shared (see package measure).
//
// Pods are cached as *object.Pod; secrets and configmaps, which kinformer has no typed
// model for, as *object.Raw (metadata parsed, the rest kept as raw JSON), as with
// -metadata-only. With -projection, pods are cached as an embedder's projection of
// them (podImages: metadata, and the containers' names and images). The informer is built as informer.For builds it (discovery, then
// listwatch.For), but with informer.New so that -keep-managed-fields can replace the
// default transform, informer.StripManagedFields.
//
// With -shards N -shard I the informer caches one shard (informer.Options.Shard): the part
// of the hash space of metadata.namespace that shard.Assign over members "0" … "N-1" and
// shard.DefaultBuckets gives member "I", as N processes of a sharded controller would
// split it. The informer sends it as the shardSelector of every list and watch, and drops
// what lies outside it itself when the server ignores it; the result's shard_filtering
// says which happened, and objects is what the shard's cache holds.
//
//	kinformer-runner -server http://127.0.0.1:8080 -resource pods -namespace bench \
//	    -scenario watch -objects 1000 -events 50000
//	kinformer-runner -server http://127.0.0.1:8080 -resource pods -scenario sync \
//	    -shards 4 -shard 0
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/kinformer/kinformer/bench/measure"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

func main() {
	run := measure.Begin() // first: sync_seconds counts from here
	run.Main(&engine{})
}

// engine picks the object type, then defers to typed.
type engine struct {
	measure.Engine
}

// Name is "kinformer", or "kinformer-protobuf" with -protobuf (reads asked in
// protobuf: listwatch.EncodingProtobuf; without it, EncodingJSON, whatever the server
// offers).
func (*engine) Name(cfg *measure.Config) string {
	if cfg.Protobuf {
		return "kinformer-protobuf"
	}
	return "kinformer"
}

// ShardFiltering makes the engine a measure.ShardedEngine.
func (e *engine) ShardFiltering() string {
	if s, ok := e.Engine.(interface{ ShardFiltering() string }); ok {
		return s.ShardFiltering()
	}
	return ""
}

// shardOf is member i's part of the namespaces' hash space split among n members
// "0" … "n-1", as every member of a sharded controller computes it.
func shardOf(n, i int) (shard.Selector, error) {
	members := make([]string, n)
	for j := range members {
		members[j] = strconv.Itoa(j)
	}
	sel, ok := shard.Assign(members, shard.DefaultBuckets).Selector(strconv.Itoa(i), shard.Namespace)
	if !ok {
		return sel, fmt.Errorf("member %d of %d owns no part of the hash space", i, n)
	}
	return sel, nil
}

func (e *engine) Build(ctx context.Context, cfg *measure.Config, handlers []measure.EventFunc) error {
	c, err := client(cfg)
	if err != nil {
		return err
	}
	switch {
	case cfg.Projection && (cfg.Resource != "pods" || cfg.MetadataOnly):
		return errors.New("-projection: pods only, and not with -metadata-only")
	case cfg.Projection:
		e.Engine = &typed[*podImages]{client: c}
	case cfg.Resource == "pods" && !cfg.MetadataOnly:
		e.Engine = &typed[*object.Pod]{client: c}
	default:
		e.Engine = &typed[*object.Raw]{client: c}
	}
	return e.Engine.Build(ctx, cfg, handlers)
}

// podImages is the -projection: what a tool that reads only pods' names, labels and
// images would declare (object.CheckProjection).
type podImages struct {
	Metadata object.ObjectMeta `json:"metadata"`
	Spec     struct {
		Containers []struct {
			Name  string `json:"name"`
			Image string `json:"image"`
		} `json:"containers"`
	} `json:"spec"`
}

func (p *podImages) Meta() *object.ObjectMeta { return &p.Metadata }

// client is the listwatch client of -server (with -ca) or -kubeconfig, without client-side
// rate limiting.
func client(cfg *measure.Config) (*listwatch.Client, error) {
	var lc *listwatch.Config
	if cfg.Kubeconfig != "" {
		var err error
		if lc, err = listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: cfg.Kubeconfig}); err != nil {
			return nil, err
		}
	} else {
		lc = &listwatch.Config{Host: cfg.Server}
		if cfg.CA != "" {
			ca, err := os.ReadFile(cfg.CA)
			if err != nil {
				return nil, err
			}
			lc.TLS.CAData = ca
		}
	}
	lc.QPS = -1
	lc.Encoding = listwatch.EncodingJSON
	if cfg.Protobuf {
		lc.Encoding = listwatch.EncodingProtobuf
	}
	return listwatch.New(lc)
}

type typed[T object.Object] struct {
	client    *listwatch.Client
	streaming bool
	inf       *informer.Informer[T]
	regs      []informer.Syncer
	wg        sync.WaitGroup
}

func (e *typed[T]) Name(*measure.Config) string { return "kinformer" }

func (e *typed[T]) Build(ctx context.Context, cfg *measure.Config, handlers []measure.EventFunc) error {
	info, err := e.client.Discover(ctx, cfg.Resource)
	if err != nil {
		return err
	}
	lw := listwatch.For[T](e.client, info, cfg.Namespace)
	if cfg.MetadataOnly {
		lw = lw.MetadataOnly()
	}
	opts := informer.Options[T]{Name: cfg.Resource, Reflector: reflector.Options{StreamingList: cfg.StreamingList}}
	if cfg.KeepManagedFields {
		opts.Transform = informer.NoTransform[T]
	}
	if cfg.Shards > 0 {
		if opts.Shard, err = shardOf(cfg.Shards, cfg.Shard); err != nil {
			return err
		}
	}
	e.streaming = cfg.StreamingList
	if e.inf, err = informer.New[T](lw, opts); err != nil {
		return err
	}
	for i, h := range handlers {
		// A handler that falls more than BufferSize behind has its notifications merged
		// per object (kinformer's bounded buffers): the fast handlers, which must each
		// count every event as client-go's unbounded buffers deliver them, get room for
		// the whole run; the slow one (first, with -slow-handler) keeps the default and
		// shows what bounding costs it.
		hopts := informer.HandlerOptions{Name: fmt.Sprintf("bench-%d", i), BufferSize: cfg.Events + cfg.Objects + 1024}
		if cfg.SlowHandler > 0 && i == 0 {
			hopts.BufferSize = 0
		}
		reg, err := e.inf.AddEventHandler(informer.HandlerFuncs[T]{
			AddFunc:    func(o T, initial bool) { h(initial, o.Meta().Annotations) },
			UpdateFunc: func(_, o T) { h(false, o.Meta().Annotations) },
			DeleteFunc: func(o T, _ bool) { h(false, o.Meta().Annotations) },
		}, hopts)
		if err != nil {
			return err
		}
		e.regs = append(e.regs, reg)
	}
	return nil
}

func (e *typed[T]) Start(ctx context.Context) error {
	e.wg.Go(func() { e.inf.Run(ctx) })
	return nil
}

func (e *typed[T]) WaitForSync(ctx context.Context) error {
	return informer.WaitForSync(ctx, append([]informer.Syncer{e.inf}, e.regs...)...)
}

func (e *typed[T]) Len() int { return e.inf.Cache().Len() }

// ShardFiltering is "server" or "client" from the reflector's status, "" when it cannot
// tell (or there is no shard).
func (e *typed[T]) ShardFiltering() string {
	switch f := e.inf.Status().ShardFiltering; f {
	case reflector.ShardFilteringServer, reflector.ShardFilteringClient:
		return strings.ToLower(string(f))
	}
	return ""
}

func (e *typed[T]) Mode() string {
	if e.streaming && !e.inf.Status().StreamingFallback {
		return measure.ModeStreamingList
	}
	return measure.ModeListWatch
}
