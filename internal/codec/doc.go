// Package codec decodes and encodes the API objects of package object: one pass over an
// object's bytes, no encoding/json and no reflection on the hot path, and in memory a
// decoded object that is as small as the engine can make it without losing a byte of
// what the server sent.
//
// Package object is the object model (what a Pod is, what a controller reads); this
// package is how those types meet JSON. The model's MarshalJSON and UnmarshalJSON are one
// line each that call Marshal and Unmarshal, and listwatch, which has already validated
// each frame with jsonscan.Valid, calls DecodeUnvalidated. That name carries the danger:
// given bytes that are not JSON it returns an error or a wrong value (never a panic), so
// it is for callers that validated first, and the package is internal so that no one
// else can call it.
//
// # Tables, built once
//
// Register (called by package object when it loads, with its Schema) builds a table for
// each type: for each JSON member name, the field's offset in the struct and a
// decodeFunc that writes the field in place (leaves.go). Decoding walks the bytes and
// the table together; a member the table does not name goes, still as bytes, to the
// struct's Unknown field. Options do not add branches to that walk: they select a
// variant of the object's table, made once, whose metadata skips managedFields or hands
// its labels to a MapTable.
//
// # One pod in memory
//
// A pod as the apiserver sends it (shortened):
//
//	{"metadata":{"name":"web-7d9f-x2k4q","namespace":"shop","uid":"5c1e…",
//	  "resourceVersion":"4211","labels":{"app":"web","pod-template-hash":"7d9f"},
//	  "ownerReferences":[{"kind":"ReplicaSet","name":"web-7d9f","uid":"a0b3…",…}],
//	  "managedFields":[…]},
//	 "spec":{"nodeName":"node-3","restartPolicy":"Always",
//	  "containers":[{"name":"web","image":"nginx:1.27"}]},
//	 "status":{"phase":"Running","podIP":"10.0.3.7","conditions":[…]}}
//
// and what an object.Pod decoded from it holds:
//
//	Pod
//	├─ ObjectMeta
//	│  ├─ Name, UID, ResourceVersion   strings of their own (unique to the object)
//	│  ├─ Namespace ────────────────→ "shop"             ┐ interned: one copy per
//	│  ├─ OwnerReferences[0].Kind ──→ "ReplicaSet"       ┘ process (intern.go)
//	│  ├─ Labels ───────────────────→ map[app:web …]     one map for every pod of the
//	│  │                                                  ReplicaSet (maptable.go)
//	│  └─ Unknown                     managedFields, unless Options drop them
//	├─ Spec
//	│  ├─ NodeName ─────────────────→ "node-3"           interned
//	│  ├─ Volumes[0].Name             "kube-api-access-x2k4q": the one part of the
//	│  ├─ Containers[0]                spec that differs between the pods of a
//	│  │  ├─ VolumeMounts[0].Name      ReplicaSet, in fields of its own
//	│  │  └─ head ─────────────────→ name, image, and in its Unknown ports, env,
//	│  │                              probes …: the same in every pod of the
//	│  │                              ReplicaSet, held once (heads.go)
//	│  └─ Unknown.p  a pointer to one buffer, the members no field claims, packed,
//	│                behind their length (a uvarint):
//	│
//	│       ┌─────────────┬──────────┬─────────────────────────────────────────────┐
//	│       │ name header │ value    │ value                                       │
//	│       │ (uvarint)   │ header   │                                             │
//	│       ├─────────────┼──────────┼─────────────────────────────────────────────┤
//	│       │ word#restartPolicy │ 2<<1|1 │ V(Always)                             │
//	│       │ word#tolerations   │ n<<1|1 │ [{K(key)"node.kubernetes.io/…",…}]    │
//	│       └─────────────┴──────────┴─────────────────────────────────────────────┘
//	│
//	│     A name that is one of the API's words (words.go) is a header alone; any other
//	│     name follows its header. K(w) and V(w) are two bytes each, a mark (a control
//	│     byte that JSON text never holds outside a string's escapes) and the word's
//	│     index: "key": becomes 2 bytes, "Always" 2 bytes (pack.go).
//	└─ Status
//	   ├─ Phase ────────────────────→ "Running"          interned
//	   ├─ Conditions[0]               its lastTransitionTime, and a head ──→
//	   │                              {type: Ready, status: True, lastProbeTime: null}
//	   │                              that every ready pod of the cache points at
//	   └─ Unknown.p  hostIP, podIPs, startTime, …: the pod's own, packed the same way,
//	                 and each IPv4 address in 5 bytes, each time in 6 (pack.go)
//
// Nothing in the object points into the bytes it was decoded from: what it keeps is a
// copy or a shared interned value, so a watch frame's buffer is reused at once.
//
// Encoding (encode.go) writes the modelled fields and the Unknown members together,
// sorted by name as encoding/json sorts a map, unpacking the words: an object read and
// written again carries every member the server sent, even those this engine has never
// heard of, which is what lets a controller update an object without dropping fields.
//
// # What is shared, and why that is safe
//
// Interned strings are immutable. A Members buffer is never written once built (Set and
// Delete build a new one), so copies of an object share it freely. Label and annotation
// maps shared through a MapTable are the one thing a careless caller could change in
// place, which is why a table belongs to one informer's cache and why objects decoded
// with Options.Maps must be treated as read-only (the informer's mutation detector
// catches those who do not).
//
// A MapTable also holds its cache's heads (heads.go), the parts of conditions,
// containers and container statuses that many objects hold alike, found by their text;
// and its shared parts (parts.go): a struct's Unknown buffer,
// or a long string, that another live object decoded with the same table already holds
// is handed out again instead of copied. The pods of one ReplicaSet then hold their
// containers' and volumes' unknown members once. The table points at its parts weakly:
// a part goes with the last object holding it, and its entry with it. Objects decoded
// so share bytes that Unknown.Get may hand out: writing into them changes every object
// holding the part, which is one more reason the cache's objects are read-only.
//
// The registered schema and the intern tables are the package's only package-level
// state: the first is written once, at init; the second are lossy caches whose lookups
// return an equal value or a fresh one, so they cannot change a result.
package codec
