package codec

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/protowire"
	"github.com/kinformer/kinformer/internal/testrig/pbmsg"
)

// decodeModified is decodePB of a MODIFIED event's object.
func decodeModified(msg []byte, opts Options) (p *pbPod, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return decodeProtobuf[*pbPod](pbRegistry, msg, opts, recallKeep)
}

// decodeBothWays decodes msg alone, and through tab (which may remember an earlier
// state of it), as a MODIFIED event's object; checks that the two objects are equal and
// encode to the same bytes; and returns the second; ok is false when msg does not
// decode (both ways, or the test fails).
func decodeBothWays(t *testing.T, msg []byte, tab *MapTable) (over *pbPod, ok bool) {
	t.Helper()
	plain, perr := decodePB(msg, Options{DropManagedFields: true, Maps: NewMapTable()})
	over, oerr := decodeModified(msg, Options{DropManagedFields: true, Maps: tab})
	if (perr == nil) != (oerr == nil) {
		t.Fatalf("decoding %x: %v without a cached object, %v against one", msg, perr, oerr)
	}
	if perr != nil {
		return nil, false
	}
	if (plain == nil) != (over == nil) {
		t.Fatalf("decoding %x: %v alone, %v through the table", msg, plain, over)
	}
	if d := cmp.Diff(plain, over, pbCmp); d != "" {
		t.Fatalf("decoding %x against a cached object (-alone +against it):\n%s", msg, d)
	}
	a, aerr := encodePB(plain)
	b, berr := encodePB(over)
	if (aerr == nil) != (berr == nil) || !bytes.Equal(a, b) {
		t.Fatalf("decoding %x: encoded alone %x (%v), against a cached object %x (%v)", msg, a, aerr, b, berr)
	}
	return over, true
}

// shared names the parts of got that are prior's own (the same memory); shared(p, p) the
// parts p has. Unknown fields are left out: short ones are interned, the same memory in
// any two objects.
func shared(prior, got *pbPod) []string {
	var out []string
	add := func(name string, same bool) {
		if same {
			out = append(out, name)
		}
	}
	ptr := func(v any) uintptr { return reflect.ValueOf(v).Pointer() }
	add("spec.state", got.Spec.State != nil && got.Spec.State == prior.Spec.State)
	add("spec.priority", got.Spec.Priority != nil && got.Spec.Priority == prior.Spec.Priority)
	add("status.conditions", len(got.Status.Conditions) > 0 && ptr(got.Status.Conditions) == ptr(prior.Status.Conditions))
	add("status.containers", len(got.Status.Containers) > 0 && ptr(got.Status.Containers) == ptr(prior.Status.Containers))
	add("status.volumes", len(got.Status.Volumes) > 0 && ptr(got.Status.Volumes) == ptr(prior.Status.Volumes))
	return out
}

// withField returns msg with the fields of number num (at the top, or in the top-level
// message numbered in) replaced by fields (none: removed).
func withField(t *testing.T, msg []byte, in, num protowire.Number, fields ...[]byte) []byte {
	t.Helper()
	var out [][]byte
	replaced := false
	for _, f := range fieldsOfMsg(t, msg) {
		n, _, v, _ := protowire.Next(f)
		switch {
		case in != 0 && n == in:
			out = append(out, pbmsg.Msg(int(in), withField(t, v, 0, num, fields...)))
		case in == 0 && n == num && !replaced:
			out = append(out, fields...)
			replaced = true
		case in == 0 && n == num:
		default:
			out = append(out, f)
		}
	}
	if in == 0 && !replaced {
		out = append(out, fields...)
	}
	return pbmsg.Cat(out...)
}

// A field that reads as the object's last state is that state's; one that does not is
// decoded; either way the object is the one decoding alone makes.
func TestProtobufDecodeAgainstLastState(t *testing.T) {
	pod := canonicalPod()
	all := []string{"spec.state", "spec.priority", "status.conditions", "status.containers", "status.volumes"}
	spec := []string{"spec.state", "spec.priority"}
	status := []string{"status.conditions", "status.containers", "status.volumes"}
	tests := []struct {
		name string
		msg  []byte
		want []string
	}{
		{"unchanged", pod, all},
		{"the metadata changed: it is decoded, the rest taken", withField(t, pod, 1, 5, pbmsg.Str(5, "uid-2")), all},
		{"another object", withField(t, pod, 1, 1, pbmsg.Str(1, "web-2")), nil},
		{"the same name in another namespace", withField(t, pod, 1, 3, pbmsg.Str(3, "other")), nil},
		{"the phase changed", withField(t, pod, 3, 1, pbmsg.Str(1, "Failed")), all},
		{"a condition's time changed", withField(t, pod, 3, 2,
			pbmsg.Msg(2, pbmsg.Str(1, "Ready"), pbmsg.Str(2, "True"), pbmsg.Str(3, "probe"), pbmsg.Msg(4, pbmsg.Var(1, 1700000009), pbmsg.Var(2, 0))),
			pbmsg.Msg(2, pbmsg.Str(1, "Scheduled"), pbmsg.Str(2, "True"), pbmsg.Msg(4))),
			append(slices.Clone(spec), "status.containers", "status.volumes")},
		{"a condition fewer", withField(t, pod, 3, 2,
			pbmsg.Msg(2, pbmsg.Str(1, "Ready"), pbmsg.Str(2, "True"), pbmsg.Str(3, "probe"), pbmsg.Msg(4, pbmsg.Var(1, 1700000001), pbmsg.Var(2, 0)))),
			append(slices.Clone(spec), "status.containers", "status.volumes")},
		{"a container head's unknown field changed", withField(t, pod, 3, 8,
			pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Var(4, 1), pbmsg.Str(5, "nginx:1.28"), pbmsg.Str(8, "c-1")),
			pbmsg.Msg(8, pbmsg.Str(1, "sidecar"), pbmsg.Var(4, 0), pbmsg.Str(8, "c-2"))),
			append(slices.Clone(spec), "status.conditions", "status.volumes")},
		{"a container's own field changed", withField(t, pod, 3, 8,
			pbmsg.Msg(8, pbmsg.Str(1, "web"), pbmsg.Var(4, 1), pbmsg.Str(5, "nginx:1.27"), pbmsg.Str(8, "c-9")),
			pbmsg.Msg(8, pbmsg.Str(1, "sidecar"), pbmsg.Var(4, 0), pbmsg.Str(8, "c-2"))),
			append(slices.Clone(spec), "status.conditions", "status.volumes")},
		{"a spec's unknown field changed", withField(t, pod, 2, 12, pbmsg.Fixed32(12, 1)), all},
		{"a spec's unknown fields in another order", withField(t, withField(t, pod, 2, 11), 2, 12, pbmsg.Fixed32(12, 0x0a0b0c0d), pbmsg.Fixed64(11, 0x0102030405060708)), all},
		{"the state is gone", withField(t, pod, 2, 7), append([]string{"spec.priority"}, status...)},
		// An empty string left out decodes as one written: the same state.
		{"the state's empty message left out", withField(t, pod, 2, 7, pbmsg.Msg(7, pbmsg.Str(1, "Waiting"))), all},
		{"the state's reason changed", withField(t, pod, 2, 7, pbmsg.Msg(7, pbmsg.Str(1, "Pulling"), pbmsg.Str(2, ""))), append([]string{"spec.priority"}, status...)},
		{"a field the state lacked", withField(t, pod, 2, 7, pbmsg.Msg(7, pbmsg.Str(1, "Waiting"), pbmsg.Str(2, ""), pbmsg.Str(3, "x"))), append([]string{"spec.priority"}, status...)},
		// A message given twice is its occurrences merged, decoded from zero: the state
		// here, whose merge reads as the remembered one, is not taken from it, nor is the
		// spec, given twice, in whole or in part.
		{"the state given twice", withField(t, pod, 2, 7, pbmsg.Msg(7, pbmsg.Str(1, "Gone")), pbmsg.Msg(7, pbmsg.Str(1, "Waiting"), pbmsg.Str(2, ""))), append([]string{"spec.priority"}, status...)},
		{"the priority changed", withField(t, pod, 2, 5, pbmsg.Var(5, 8)), append([]string{"spec.state"}, status...)},
		{"the spec given twice", withField(t, pod, 0, 2, pbmsg.Msg(2, canonicalSpec()), pbmsg.Msg(2, pbmsg.Str(10, "node-4"))), status},
		{"the spec given twice, first a new one", withField(t, pod, 0, 2, pbmsg.Msg(2, pbmsg.Var(5, 8)), pbmsg.Msg(2, canonicalSpec())), status},
		{"a condition of the wrong wire type", withField(t, pod, 3, 2, pbmsg.Var(2, 1)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := NewMapTable()
			prior, err := decodeModified(pod, Options{DropManagedFields: true, Maps: tab})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := decodeBothWays(t, tt.msg, tab)
			if !ok {
				if tt.want != nil {
					t.Fatalf("the message does not decode")
				}
				return
			}
			if d := cmp.Diff(tt.want, shared(prior, got)); d != "" {
				t.Errorf("parts taken from the last state (-want +got):\n%s", d)
			}
			// What was decoded now is remembered (unless the spec was given twice, which
			// leaves the last state as it was): the same bytes again take everything.
			if strings.Contains(tt.name, "spec given twice") {
				return
			}
			again, _ := decodeBothWays(t, tt.msg, tab)
			if d := cmp.Diff(shared(got, got), shared(got, again)); d != "" {
				t.Errorf("the same bytes again: parts taken from the state before (-want +got):\n%s", d)
			}
		})
	}
}

// Only a MODIFIED event's object is remembered (a list's objects may never change: the
// table would weigh as much as its cache for nothing), and a forgotten table (the
// mutation detector's Forget) remembers nothing.
func TestProtobufDecodeRemembersModifiedOnly(t *testing.T) {
	pod := canonicalPod()
	tab := NewMapTable()
	listed := mustDecodePB(t, pod, Options{DropManagedFields: true, Maps: tab})
	got, _ := decodeBothWays(t, pod, tab)
	if s := shared(listed, got); len(s) != 0 {
		t.Errorf("a listed object lent %v to the next state", s)
	}
	again, _ := decodeBothWays(t, pod, tab)
	if s := shared(got, again); len(s) != 5 {
		t.Errorf("a MODIFIED event's object lent only %v to the next state", s)
	}
	tab.Forget()
	after, _ := decodeBothWays(t, pod, tab)
	if s := shared(again, after); len(s) != 0 {
		t.Errorf("after Forget, the last state lent %v", s)
	}
}

// The table lets go of what the cache lets go of: a deleted object (DELETED), the state
// a list's object replaces, and a name not changed for a whole sweep period; a name
// changed in every period stays.
func TestProtobufRecentsLetGo(t *testing.T) {
	opts := func(tab *MapTable) Options { return Options{DropManagedFields: true, Maps: tab} }
	named := func(name string) []byte { return withField(t, canonicalPod(), 1, 1, pbmsg.Str(1, name)) }
	remembered := func(tab *MapTable, name string) unsafe.Pointer {
		_, p := tab.recents.get("shop", name)
		return p
	}
	// collected reports whether the object at p is collected, once nothing holds it.
	collected := func(t *testing.T, p *pbPod) func() bool {
		gone := make(chan struct{})
		runtime.AddCleanup(p, func(ch chan struct{}) { close(ch) }, gone)
		return func() bool {
			for range 20 {
				runtime.GC()
				select {
				case <-gone:
					return true
				case <-time.After(10 * time.Millisecond):
				}
			}
			return false
		}
	}

	t.Run("deleted", func(t *testing.T) {
		tab := NewMapTable()
		p, err := decodeProtobuf[*pbPod](pbRegistry, named("web"), opts(tab), recallKeep)
		if err != nil || remembered(tab, "web") != unsafe.Pointer(p) {
			t.Fatalf("a changed object is not remembered (%v)", err)
		}
		beforeCollected := collected(t, p)
		deleted, err := decodeProtobuf[*pbPod](pbRegistry, named("web"), opts(tab), recallDrop)
		if err != nil {
			t.Fatal(err)
		}
		if remembered(tab, "web") != unsafe.Pointer(deleted) {
			t.Errorf("a deleted object still held elsewhere is not the last state")
		}
		deletedCollected := collected(t, deleted)
		p, deleted = nil, nil
		if !beforeCollected() {
			t.Errorf("the table keeps the state before a deletion alive")
		}
		if !deletedCollected() {
			t.Errorf("the table keeps a deleted object alive")
		}
		if remembered(tab, "web") != nil {
			t.Errorf("a deleted object collected is still remembered")
		}
	})
	t.Run("listed", func(t *testing.T) {
		tab := NewMapTable()
		p, _ := decodeProtobuf[*pbPod](pbRegistry, named("web"), opts(tab), recallKeep)
		isCollected := collected(t, p)
		listed, err := decodeProtobuf[*pbPod](pbRegistry, named("web"), opts(tab), recallUse)
		if err != nil || remembered(tab, "web") != unsafe.Pointer(listed) {
			t.Fatalf("a listed object did not take its last state's place (%v)", err)
		}
		p = nil
		if !isCollected() {
			t.Errorf("the table keeps a state the list replaced alive")
		}
		other, _ := decodeProtobuf[*pbPod](pbRegistry, named("db"), opts(tab), recallUse)
		if remembered(tab, "db") != nil {
			t.Errorf("a listed object never changed is remembered: %p", other)
		}
	})
	// strong counts the objects the table holds by plain pointers.
	strong := func(tab *MapTable) int {
		tab.recents.mu.Lock()
		defer tab.recents.mu.Unlock()
		n := 0
		for _, v := range tab.recents.m {
			if v.obj != nil {
				n++
			}
		}
		return n
	}
	t.Run("let go two periods after its last change", func(t *testing.T) {
		tab := NewMapTable()
		p, _ := decodeProtobuf[*pbPod](pbRegistry, named("gone"), opts(tab), recallKeep)
		isCollected := collected(t, p)
		p = nil
		var hot *pbPod
		for i := range 2 * recentsPeriod {
			decodeProtobuf[*pbPod](pbRegistry, named(fmt.Sprintf("pod-%d", i)), opts(tab), recallKeep)
			if i%(recentsPeriod/2) == 0 {
				hot, _ = decodeProtobuf[*pbPod](pbRegistry, named("hot"), opts(tab), recallKeep)
			}
		}
		if !isCollected() {
			t.Errorf("an object the cache let go of is kept alive %d changes later", 2*recentsPeriod)
		}
		tab.recents.mu.Lock()
		rec := tab.recents.m[tab.recents.key("shop", "hot")]
		tab.recents.mu.Unlock()
		if rec.obj != unsafe.Pointer(hot) {
			t.Errorf("an object changed in every period is not held strongly (a weak pointer made for it)")
		}
		if n := strong(tab); n > 2*recentsPeriod {
			t.Errorf("%d objects held strongly, want at most %d", n, 2*recentsPeriod)
		}
	})
	t.Run("a cache larger than a period", func(t *testing.T) {
		// The cache holds every object (cached); each state is decoded against the one
		// before, however many changes came between them.
		tab := NewMapTable()
		const pods = 3 * recentsPeriod
		cached := make([]*pbPod, pods)
		for round := range 3 {
			against := 0
			for i := range cached {
				name := fmt.Sprintf("pod-%d", i)
				if remembered(tab, name) == unsafe.Pointer(cached[i]) && cached[i] != nil {
					against++
				}
				p, err := decodeProtobuf[*pbPod](pbRegistry, named(name), opts(tab), recallKeep)
				if err != nil {
					t.Fatal(err)
				}
				cached[i] = p
			}
			if want := min(round, 1) * pods; against != want {
				t.Errorf("round %d: %d of %d objects decoded against their last state, want %d", round, against, pods, want)
			}
		}
		if n := strong(tab); n > 2*recentsPeriod {
			t.Errorf("%d objects held strongly, want at most %d", n, 2*recentsPeriod)
		}
	})
	t.Run("made again after its deletion", func(t *testing.T) {
		// The deleted object is still held elsewhere (on its way to the handlers).
		tab := NewMapTable()
		decodeProtobuf[*pbPod](pbRegistry, named("web-0"), opts(tab), recallKeep)
		deleted, _ := decodeProtobuf[*pbPod](pbRegistry, named("web-0"), opts(tab), recallDrop)
		again, err := decodeProtobuf[*pbPod](pbRegistry, named("web-0"), opts(tab), recallKeep)
		if err != nil {
			t.Fatal(err)
		}
		if s := shared(deleted, again); len(s) != 5 {
			t.Errorf("the object made again took only %v from the deleted one", s)
		}
	})
}

// FuzzProtobufDecodeAgainstLastState: whatever the last state and the message, decoding
// against it makes exactly the object decoding alone does.
func FuzzProtobufDecodeAgainstLastState(f *testing.F) {
	pod := canonicalPod()
	f.Add(pod, pod)
	f.Add(pod, pbmsg.Cat(canonicalTop()[:3]...))
	f.Add(pbmsg.Cat(canonicalTop()[1:]...), pod)
	for _, cut := range []int{10, 40, 120} {
		f.Add(pod, pod[:len(pod)-cut])
		f.Add(pod[:len(pod)-cut], pod)
	}
	name := pbmsg.Msg(1, pbmsg.Str(1, "p"), pbmsg.Str(3, "ns"))
	f.Fuzz(func(t *testing.T, priorMsg, msg []byte) {
		// Both named alike first (a later metadata field in either is merged over it).
		tab := NewMapTable()
		prior, err := decodeModified(pbmsg.Cat(name, priorMsg), Options{DropManagedFields: true, Maps: tab})
		if err != nil {
			return
		}
		decodeBothWays(t, pbmsg.Cat(name, msg), tab)
		decodeBothWays(t, pbmsg.Cat(name, msg), tab) // against itself
		runtime.KeepAlive(prior)
	})
}

// What a table remembers is lent only to a decode by the same table of the same type
// and options: a table may serve several, whose objects may share a name.
func TestProtobufLastStateOfAnotherTableLendsNothing(t *testing.T) {
	pod := canonicalPod()
	tab := NewMapTable()
	prior, err := decodeModified(pod, Options{DropManagedFields: true, Maps: tab})
	if err != nil {
		t.Fatal(err)
	}
	other, err := decodeModified(pod, Options{Maps: tab}) // managedFields kept: another table
	if err != nil {
		t.Fatal(err)
	}
	if s := shared(prior, other); len(s) != 0 {
		t.Errorf("decoded with other options, the pod took %v from the last state", s)
	}
}

// pbWide has more top-level fields than a table remembers (recentFields), a struct
// among them, and a headed struct held as itself, not in a slice.
type pbWide struct {
	Metadata pbMeta      `json:"metadata" pb:"1"`
	A        string      `json:"a,omitempty" pb:"2"`
	B        string      `json:"b,omitempty" pb:"3"`
	C        string      `json:"c,omitempty" pb:"4"`
	D        pbState     `json:"d" pb:"5"`
	Main     pbContainer `json:"main" pb:"6"`
	Unknown  unknown     `json:"-"`
}

var pbWideSchema = Schema{
	Types:    []reflect.Type{reflect.TypeFor[pbWide]()},
	Unknown:  pbSchema.Unknown,
	Direct:   pbSchema.Direct,
	Headed:   []reflect.Type{reflect.TypeFor[pbContainer]()},
	Messages: pbSchema.Messages,
	Metadata: pbSchema.Metadata,
}

var pbWideRegistry = newRegistry(&pbWideSchema)

// Fields given twice merge, as decoding alone merges them, whatever was remembered:
// past the fields a table remembers, in a headed struct held as itself, and in a map
// whose entry is given twice (which must not pass for a map of two keys).
func TestProtobufLastStateOfFieldsGivenTwice(t *testing.T) {
	meta := func(more ...[]byte) []byte {
		return pbmsg.Msg(1, append([][]byte{pbmsg.Str(1, "p"), pbmsg.Str(3, "ns")}, more...)...)
	}
	tests := []struct {
		name       string
		prior, msg []byte
		decode     func(msg []byte, opts Options, mode recall) (any, error)
	}{
		{"a struct given twice after more fields than are remembered",
			pbmsg.Cat(meta(), pbmsg.Msg(5, pbmsg.Str(2, "y"))),
			pbmsg.Cat(meta(), pbmsg.Str(2, "a"), pbmsg.Str(3, "b"), pbmsg.Str(4, "c"), pbmsg.Msg(5, pbmsg.Str(1, "x")), pbmsg.Msg(5, pbmsg.Str(2, "y"))),
			decodeWide},
		{"a headed struct given twice",
			pbmsg.Cat(meta(), pbmsg.Msg(6, pbmsg.Str(1, "x"))),
			pbmsg.Cat(meta(), pbmsg.Msg(6, pbmsg.Str(8, "c-1"), pbmsg.Str(1, "x")), pbmsg.Msg(6, pbmsg.Str(1, "x"))),
			decodeWide},
		{"a label given twice",
			pbmsg.Cat(meta(pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front")), pbmsg.Msg(2, pbmsg.Str(10, "n"))),
			pbmsg.Cat(meta(pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "app", "web")), pbmsg.Msg(2, pbmsg.Str(10, "n"))),
			decodePod},
		{"labels out of order",
			pbmsg.Cat(meta(pbmsg.Entry(11, "app", "web"), pbmsg.Entry(11, "tier", "front")), pbmsg.Msg(2, pbmsg.Str(10, "n"))),
			pbmsg.Cat(meta(pbmsg.Entry(11, "tier", "front"), pbmsg.Entry(11, "app", "web")), pbmsg.Msg(2, pbmsg.Str(10, "n"))),
			decodePod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := func(m *MapTable) Options { return Options{DropManagedFields: true, Maps: m} }
			want, err := tt.decode(tt.msg, opts(NewMapTable()), recallUse)
			if err != nil {
				t.Fatal(err)
			}
			tab := NewMapTable()
			prior, err := tt.decode(tt.prior, opts(tab), recallKeep)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tt.decode(tt.msg, opts(tab), recallKeep)
			if err != nil {
				t.Fatal(err)
			}
			runtime.KeepAlive(prior)
			if d := cmp.Diff(want, got, pbCmp); d != "" {
				t.Errorf("against the last state (-alone +against it):\n%s", d)
			}
		})
	}
}

func decodeWide(msg []byte, opts Options, mode recall) (any, error) {
	return decodeProtobuf[*pbWide](pbWideRegistry, msg, opts, mode)
}

func decodePod(msg []byte, opts Options, mode recall) (any, error) {
	return decodeProtobuf[*pbPod](pbRegistry, msg, opts, mode)
}

// A map that changed is a new map, whose unchanged values are the last state's strings.
func TestProtobufChangedMapKeepsUnchangedValues(t *testing.T) {
	pod := func(stamp string) []byte {
		return pbmsg.Cat(pbmsg.Msg(1, pbmsg.Str(1, "p"), pbmsg.Str(3, "ns"),
			pbmsg.Entry(12, "note", strings.Repeat("n", 100)), pbmsg.Entry(12, "sent", stamp)))
	}
	tab := NewMapTable()
	prior, err := decodeModified(pod("1"), Options{DropManagedFields: true, Maps: tab})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := decodeBothWays(t, pod("2"), tab)
	was, now := prior.Metadata.Annotations, got.Metadata.Annotations
	if reflect.ValueOf(was).UnsafePointer() == reflect.ValueOf(now).UnsafePointer() || now["sent"] != "2" {
		t.Fatalf("a changed map: %v, the last state's %v", now, was)
	}
	if unsafe.StringData(was["note"]) != unsafe.StringData(now["note"]) {
		t.Errorf("the unchanged value is a string of its own")
	}
}

// A map decoded against the last state's is that map when its entries are the same,
// else a new one whose unchanged values are the last state's strings; whichever way,
// the map decoding alone makes, and the last state's map is left as it was.
func TestProtobufMapOverLastState(t *testing.T) {
	pod := func(entries ...[2]string) []byte {
		fields := []([]byte){pbmsg.Str(1, "p"), pbmsg.Str(3, "ns")}
		for _, e := range entries {
			fields = append(fields, pbmsg.Entry(12, e[0], e[1]))
		}
		return pbmsg.Msg(1, fields...)
	}
	base := [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}}
	with := func(changes map[string]string, drop ...string) [][2]string {
		var out [][2]string
		for _, e := range base {
			if slices.Contains(drop, e[0]) {
				continue
			}
			if v, ok := changes[e[0]]; ok {
				e[1] = v
			}
			out = append(out, e)
		}
		return out
	}
	tests := []struct {
		name    string
		entries [][2]string
		same    bool // the last state's map itself
	}{
		{"unchanged", base, true},
		{"a value changed", with(map[string]string{"c": "x"}), false},
		{"four values changed", with(map[string]string{"a": "x", "b": "x", "c": "x", "d": "x"}), false},
		{"all values changed", with(map[string]string{"a": "x", "b": "x", "c": "x", "d": "x", "e": "x"}), false},
		{"a key fewer", with(nil, "c"), false},
		{"a key more", append(with(nil), [2]string{"f", "6"}), false},
		{"a key renamed", append(with(nil, "e"), [2]string{"f", "5"}), false},
		{"out of order", append([][2]string{base[1], base[0]}, base[2:]...), false},
		{"a key twice", append(with(nil, "e"), [2]string{"d", "4"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := NewMapTable()
			prior, err := decodeModified(pod(base...), Options{DropManagedFields: true, Maps: tab})
			if err != nil {
				t.Fatal(err)
			}
			was := maps.Clone(prior.Metadata.Annotations)
			got, _ := decodeBothWays(t, pod(tt.entries...), tab)
			if d := cmp.Diff(was, prior.Metadata.Annotations); d != "" {
				t.Errorf("the last state's map changed (-was +now):\n%s", d)
			}
			now, old := got.Metadata.Annotations, prior.Metadata.Annotations
			if same := reflect.ValueOf(now).UnsafePointer() == reflect.ValueOf(old).UnsafePointer(); same != tt.same {
				t.Errorf("the last state's map itself: %v, want %v", same, tt.same)
			}
			for k, v := range now {
				if old[k] == v && unsafe.StringData(old[k]) != unsafe.StringData(v) {
					t.Errorf("the unchanged value of %q is a string of its own", k)
				}
			}
		})
	}
}
