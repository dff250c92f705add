package informer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/object"
)

// MutationDetectorEnv turns the cache mutation detector on for every informer of the
// process when set to "true" (or "1"), as client-go's KUBE_CACHE_MUTATION_DETECTOR does:
// a switch for a test run or a debugging session, without a rebuild.
const MutationDetectorEnv = "KINFORMER_CACHE_MUTATION_DETECTOR"

// MutationDetector finds code that changes a cached object in place. Cached objects are
// shared by every reader of the cache, and (with the default transform) their label and
// annotation maps are shared between objects too: a handler that sets a label on the
// object it was given changes the cache under every other reader, and under objects it
// never saw. Such bugs are silent and far from their cause.
//
// When enabled, the informer keeps a fingerprint of each object as it enters the cache
// (its JSON encoding: this costs about as much memory again as the cache, so it is for
// tests and debugging, not production), and compares it with the object as it is now
// when the cache replaces or deletes that object, and every Period for the whole cache.
// A difference is reported with the key and the path of the first changed field
// (metadata.labels.app, spec.containers[0].image): logged at error level, counted in
// kinformer_informer_cache_mutations_total, in the status (Mutations, LastMutation), and
// to OnMutation. Unlike client-go's detector it does not panic: the process is told, and
// decides.
//
// Disabled, it costs one pointer check per stored object.
type MutationDetector struct {
	// Enabled turns the detector on (as does MutationDetectorEnv).
	Enabled bool
	// Period is how often the whole cache is checked [10 s].
	Period time.Duration
	// OnMutation, when set, is told of each mutation found, on the informer's goroutine.
	OnMutation func(Mutation)
}

// Mutation is a cached object found changed in place.
type Mutation struct {
	Key string
	// Path is the first field that differs, in the JSON form of the object.
	Path string
	// Before and After are that field's JSON values as the object was cached and as it is
	// ("" where the field is absent).
	Before, After string
	// Fields counts the fields that differ (Path is the first of them).
	Fields int
}

func (m Mutation) String() string {
	return fmt.Sprintf("cached object %s was changed in place: %s %s → %s", m.Key, m.Path, m.Before, m.After)
}

// mutationDetector is the running detector of one informer; nil when disabled, and
// every method is then a no-op.
type mutationDetector struct {
	period  time.Duration
	clock   clock.Clock
	log     *slog.Logger
	metrics *informerMetrics
	found   func(Mutation) // the informer's, then OnMutation

	mu     sync.Mutex
	prints map[string]fingerprint // by key
	checks int                    // whole-cache checks done (for tests to wait on)
}

// fingerprint is an object as it entered the cache.
type fingerprint struct {
	obj  object.Object
	json []byte
}

func newMutationDetector(opts MutationDetector, clk clock.Clock, log *slog.Logger, metrics *informerMetrics, found func(Mutation)) *mutationDetector {
	if env := os.Getenv(MutationDetectorEnv); env == "true" || env == "1" {
		opts.Enabled = true
	}
	if !opts.Enabled {
		return nil
	}
	if opts.Period <= 0 {
		opts.Period = 10 * time.Second
	}
	d := &mutationDetector{period: opts.Period, clock: clk, log: log, metrics: metrics, prints: map[string]fingerprint{}}
	d.found = func(m Mutation) {
		found(m)
		if opts.OnMutation != nil {
			opts.OnMutation(m)
		}
	}
	log.Info("cache mutation detector on: every cached object is fingerprinted", "period", opts.Period)
	return d
}

// stored checks the state key held, then fingerprints obj, its new state (an object the
// cache already held, reused by a relist, keeps its fingerprint).
func (d *mutationDetector) stored(key string, obj object.Object) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if fp, ok := d.prints[key]; ok {
		d.verify(key, &fp)
		if fp.obj == obj {
			d.prints[key] = fp
			return
		}
	}
	b, err := fingerprintOf(obj)
	if err != nil {
		d.log.Warn("cache mutation detector: cannot fingerprint an object", "key", key, "err", err)
		delete(d.prints, key)
		return
	}
	d.prints[key] = fingerprint{obj: obj, json: b}
}

// removed checks the state key held one last time, and forgets it.
func (d *mutationDetector) removed(key string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if fp, ok := d.prints[key]; ok {
		d.verify(key, &fp)
		delete(d.prints, key)
	}
}

// run checks the whole cache every period until ctx ends.
func (d *mutationDetector) run(ctx context.Context) {
	for {
		tick := make(chan struct{})
		t := d.clock.AfterFunc(d.period, func() { close(tick) })
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-tick:
		}
		d.mu.Lock()
		for _, key := range slices.Sorted(maps.Keys(d.prints)) {
			fp := d.prints[key]
			d.verify(key, &fp)
			d.prints[key] = fp
		}
		d.checks++
		d.mu.Unlock()
	}
}

// verify compares fp's object with its fingerprint and reports a difference; the
// fingerprint then takes the changed state, so one mutation is reported once.
func (d *mutationDetector) verify(key string, fp *fingerprint) {
	now, err := fingerprintOf(fp.obj)
	if err != nil || bytes.Equal(now, fp.json) {
		return
	}
	m := describeMutation(key, fp.json, now)
	fp.json = now
	d.log.Error("cached object changed in place: code reading the cache must not change its objects (use object.DeepCopy)",
		"key", m.Key, "path", m.Path, "before", m.Before, "after", m.After, "fields", m.Fields)
	if d.metrics != nil {
		d.metrics.mutation()
	}
	d.found(m)
}

// fingerprintOf is what an object is compared by: its JSON, or, for an object read in
// protobuf (whose unknown fields JSON cannot carry), its protobuf.
func fingerprintOf(obj any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if errors.Is(err, object.ErrProtobufMembers) {
		return object.MarshalProtobuf(obj)
	}
	return b, err
}

// describeMutation finds the fields that differ between two JSON encodings of an object.
func describeMutation(key string, before, after []byte) Mutation {
	var a, b any
	m := Mutation{Key: key}
	if len(before) > 0 && before[0] != '{' { // an object read in protobuf (fingerprintOf)
		m.Path, m.Before, m.After, m.Fields = "(the whole object, read in protobuf)",
			fmt.Sprintf("%d bytes of protobuf", len(before)), fmt.Sprintf("%d bytes of protobuf", len(after)), 1
		return m
	}
	if json.Unmarshal(before, &a) != nil || json.Unmarshal(after, &b) != nil {
		m.Path, m.Before, m.After, m.Fields = "(the whole object)", string(before), string(after), 1
		return m
	}
	diffJSON("", a, b, &m)
	return m
}

// diffJSON walks two decoded JSON values together, counting the fields that differ in m
// and recording the first.
func diffJSON(path string, a, b any, m *Mutation) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := slices.Sorted(maps.Keys(am))
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			va, inA := am[k]
			vb, inB := bm[k]
			sub := fieldPath(path, k)
			switch {
			case inA && inB:
				diffJSON(sub, va, vb, m)
			case inA:
				m.record(sub, va, nil, false)
			default:
				m.record(sub, nil, vb, true)
			}
		}
		return
	}
	as, aIsSlice := a.([]any)
	bs, bIsSlice := b.([]any)
	if aIsSlice && bIsSlice && len(as) == len(bs) {
		for i := range as {
			diffJSON(path+"["+strconv.Itoa(i)+"]", as[i], bs[i], m)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		m.record(path, a, b, true)
	}
}

func (m *Mutation) record(path string, before, after any, hasAfter bool) {
	m.Fields++
	if m.Fields > 1 {
		return
	}
	m.Path = path
	if before != nil {
		m.Before = jsonText(before)
	}
	if hasAfter {
		m.After = jsonText(after)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// fieldPath appends a member to a path: .name when it reads as an identifier, ["name"]
// when it does not (label keys such as app.kubernetes.io/name).
func fieldPath(path, member string) string {
	plain := member != "" && !strings.ContainsFunc(member, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	switch {
	case !plain:
		return path + "[" + strconv.Quote(member) + "]"
	case path == "":
		return member
	}
	return path + "." + member
}
