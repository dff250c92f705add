package streamserver

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/shard"
)

// StampAnnotation is the annotation every object carries; on a watch event its value is
// the server's time.Now().UnixNano() when the event was written, 19 digits zero-padded.
// In lists it is "0000000000000000000".
const StampAnnotation = "bench.kinformer.io/sent-unix-nano"

// item is one pre-encoded object.
type item struct {
	name string
	ns   string   // metadata.namespace
	rv   int64    // resourceVersion in lists (and in initial events)
	rvs  []byte   // rv as digits
	full template // the object
	meta template // the object as PartialObjectMetadata
	pb   template // the object in protobuf, with Options.ProtobufObjects (see protofile.go)
	// nsHash and uidHash are shard.Hash of metadata.namespace and metadata.uid, the two
	// fields a shardSelector can hash.
	nsHash, uidHash uint64
	// kubelet, for the realistic profile's pods, is what their watch events change
	// (realistic_patch.go); nil for the other profiles.
	kubelet *podVariants
}

// kinds of the three resources, by resource name.
var kinds = map[string]string{"pods": "Pod", "secrets": "Secret", "configmaps": "ConfigMap"}

// resourceOf is the resource a profile serves: its name, but for RealisticPods' "pods".
func resourceOf(profile string) string {
	if profile == RealisticPods {
		return "pods"
	}
	return profile
}

// rvBase is the resourceVersion before the first object: real clusters have 8-digit ones.
const rvBase = 48_210_000

// epoch is when the generated cluster's objects start being created.
var epoch = time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)

// safeChars are the characters Kubernetes uses for generated name suffixes and hashes.
const safeChars = "bcdfghjklmnpqrstvwxz2456789"

type gen struct {
	r    *rand.Rand
	opts Options
	nss  []string // the namespaces, object i in nss[i%len(nss)]
}

// ns is the namespace of the i-th object generated.
func (g *gen) ns(i int) string { return g.nss[i%len(g.nss)] }

func (g *gen) suffix(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = safeChars[g.r.IntN(len(safeChars))]
	}
	return string(b)
}

func (g *gen) hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = hexDigits[g.r.IntN(16)]
	}
	return string(b)
}

func (g *gen) uid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// meta is the ObjectMeta fields every profile shares, in the apiserver's order.
func metaFields(name any, generateName string, ns, uid any, created string, labels, annotations obj, owners []obj, managed []obj) obj {
	m := obj{{"name", name}}
	if generateName != "" {
		m = append(m, field{"generateName", generateName})
	}
	m = append(m, field{"namespace", ns}, field{"uid", uid}, field{"resourceVersion", holeRV},
		field{"creationTimestamp", created})
	if len(labels) > 0 {
		m = append(m, field{"labels", labels})
	}
	m = append(m, field{"annotations", append(obj{{StampAnnotation, holeStamp}}, annotations...)})
	if len(owners) > 0 {
		m = append(m, field{"ownerReferences", owners})
	}
	if len(managed) > 0 {
		m = append(m, field{"managedFields", managed})
	}
	return m
}

func managedEntry(manager, at string, fields obj, subresource string) obj {
	e := obj{{"manager", manager}, {"operation", "Update"}, {"apiVersion", "v1"}, {"time", at},
		{"fieldsType", "FieldsV1"}, {"fieldsV1", fields}}
	if subresource != "" {
		e = append(e, field{"subresource", subresource})
	}
	return e
}

// leaf is fieldsV1's {} for a field set.
var leaf = obj{}

func fset(keys ...string) obj {
	o := make(obj, len(keys))
	for i, k := range keys {
		o[i] = field{k, leaf}
	}
	return o
}

// wholeAndPartial are an object and its PartialObjectMetadata form.
func wholeAndPartial(kind string, metadata obj, rest ...field) (full, partial obj) {
	full = append(obj{{"kind", kind}, {"apiVersion", "v1"}, {"metadata", metadata}}, rest...)
	partial = obj{{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", metadata}}
	return full, partial
}

// newItem encodes one object and its PartialObjectMetadata form.
func newItem(kind, name string, metadata obj, rest ...field) item {
	full, partial := wholeAndPartial(kind, metadata, rest...)
	it := item{name: name, full: newTemplate(full), meta: newTemplate(partial)}
	for _, f := range metadata {
		switch f.k {
		case "namespace":
			it.ns = f.v.(string)
			it.nsHash = shard.Hash(it.ns)
		case "uid":
			it.uidHash = shard.Hash(f.v.(string))
		}
	}
	return it
}

// app is one Deployment of the generated cluster.
type app struct {
	name, tier, image string
	port              int
}

var apps = []app{
	{"checkout", "backend", "ghcr.io/acme/checkout", 8080},
	{"cart", "backend", "ghcr.io/acme/cart", 7070},
	{"payments", "backend", "ghcr.io/acme/payments", 8443},
	{"catalog", "backend", "ghcr.io/acme/catalog", 3550},
	{"search", "backend", "ghcr.io/acme/search", 9200},
	{"recommendations", "backend", "ghcr.io/acme/recommendations", 8080},
	{"frontend", "frontend", "ghcr.io/acme/frontend", 8080},
	{"auth", "backend", "ghcr.io/acme/auth", 9000},
	{"inventory", "backend", "ghcr.io/acme/inventory", 8081},
	{"shipping", "backend", "ghcr.io/acme/shipping", 50051},
	{"notifications", "backend", "ghcr.io/acme/notifications", 8080},
	{"orders", "backend", "ghcr.io/acme/orders", 8080},
	{"users", "backend", "ghcr.io/acme/users", 8080},
	{"reviews", "backend", "ghcr.io/acme/reviews", 9080},
	{"ads", "backend", "ghcr.io/acme/ads", 9555},
	{"email", "backend", "ghcr.io/acme/email", 5000},
	{"currency", "backend", "ghcr.io/acme/currency", 7000},
	{"redis-cart", "cache", "docker.io/library/redis", 6379},
	{"gateway", "frontend", "ghcr.io/acme/gateway", 8443},
	{"analytics", "backend", "ghcr.io/acme/analytics", 8080},
}

// replicaSet is one of the ~100 ReplicaSets pods belong to.
type replicaSet struct {
	app         app
	hash, name  string
	uid         string
	tag, digest string
	cpu, mem    string
}

type node struct{ name, ip string }

// genPods makes n pods, as a real cluster's: spread over 100 ReplicaSets of 20
// Deployments and 50 nodes, with per-pod names, uids, IPs, container IDs and times.
func genPods(g *gen, n int) []item {
	rss, nodes := podCluster(g)
	seen := map[string]bool{}
	items := make([]item, n)
	for i := range items {
		rs := &rss[g.r.IntN(len(rss))]
		name := rs.name + "-" + g.suffix(5)
		for seen[name] {
			name = rs.name + "-" + g.suffix(5)
		}
		seen[name] = true
		items[i] = genPod(g, i, name, rs, &nodes[g.r.IntN(len(nodes))])
	}
	return items
}

// podCluster makes the 100 ReplicaSets and 50 nodes pods are spread over.
func podCluster(g *gen) ([]replicaSet, []node) {
	rss := make([]replicaSet, 100)
	for j := range rss {
		a := apps[j%len(apps)]
		h := g.suffix(10)
		rss[j] = replicaSet{app: a, hash: h, name: a.name + "-" + h, uid: g.uid(),
			tag:    fmt.Sprintf("v1.%d.%d", g.r.IntN(30), g.r.IntN(10)),
			digest: g.hex(64), cpu: []string{"100m", "250m", "500m"}[g.r.IntN(3)],
			mem: []string{"128Mi", "256Mi", "512Mi"}[g.r.IntN(3)]}
	}
	nodes := make([]node, 50)
	for j := range nodes {
		nodes[j] = node{fmt.Sprintf("gke-prod-pool-%d-%s-%s", 1+j%3, g.hex(8), g.suffix(4)),
			fmt.Sprintf("10.0.%d.%d", 16+g.r.IntN(32), 2+g.r.IntN(250))}
	}
	return rss, nodes
}

func genPod(g *gen, i int, name string, rs *replicaSet, nd *node) item {
	md, rest := podFields(g, i, podID{name: name}, rs, nd)
	return newItem("Pod", name, md, rest...)
}

// podID is a pod's own values, each a string or, for a lazily generated pod's template,
// a hole or a spliced string; nil ones (but the name) are drawn or derived from i.
type podID struct {
	name, ns, uid, podIP, containerID any
}

// podFields is pod i's metadata and the fields after it (spec, status).
func podFields(g *gen, i int, id podID, rs *replicaSet, nd *node) (obj, []field) {
	o := g.opts
	a := rs.app
	created := epoch.Add(time.Duration(g.r.IntN(30*24*3600)) * time.Second)
	scheduled := created.Add(time.Second)
	started := scheduled.Add(time.Duration(2+g.r.IntN(15)) * time.Second)
	ready := started.Add(time.Duration(1+g.r.IntN(10)) * time.Second)
	podIP := id.podIP
	if podIP == nil {
		podIP = fmt.Sprintf("10.%d.%d.%d", 100+i>>16, (i>>8)&255, i&255)
	}
	vol := "kube-api-access-" + g.suffix(5)
	cname := a.name
	image := a.image + ":" + rs.tag
	uid := id.uid
	if uid == nil {
		uid = g.uid()
	}
	ns := id.ns
	if ns == nil {
		ns = g.ns(i)
	}

	labels := obj{{"app", a.name}, {"pod-template-hash", rs.hash}, {"tier", a.tier}}
	annotations := obj{{"prometheus.io/scrape", "true"}}
	owners := []obj{{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", rs.name}, {"uid", rs.uid},
		{"controller", true}, {"blockOwnerDeletion", true}}}
	var managed []obj
	if !o.NoManagedFields {
		managed = []obj{
			managedEntry("kube-controller-manager", ts(created), obj{
				{"f:metadata", obj{{"f:generateName", leaf},
					{"f:labels", fset(".", "f:app", "f:pod-template-hash", "f:tier")},
					{"f:ownerReferences", obj{{".", leaf}, {`k:{"uid":"` + rs.uid + `"}`, leaf}}}}},
				{"f:spec", obj{
					{"f:containers", obj{{`k:{"name":"` + cname + `"}`, obj{{".", leaf}, {"f:image", leaf}, {"f:name", leaf}}}}}}},
			}, ""),
			managedEntry("kubectl-client-side-apply", ts(created.Add(-time.Hour)), obj{
				{"f:metadata", obj{{"f:annotations", fset(".", "f:prometheus.io/scrape")}}},
			}, ""),
			managedEntry("kubelet", ts(ready), obj{
				{"f:status", obj{
					{"f:conditions", obj{
						{`k:{"type":"Ready"}`, fset(".", "f:lastProbeTime", "f:lastTransitionTime", "f:status", "f:type")}}},
					{"f:containerStatuses", leaf}, {"f:hostIP", leaf}, {"f:phase", leaf}, {"f:podIP", leaf},
					{"f:podIPs", leaf},
					{"f:startTime", leaf}}},
			}, "status"),
		}
	}
	md := metaFields(id.name, rs.name+"-", ns, uid, ts(created), labels, annotations, owners, managed)

	container := obj{
		{"name", cname},
		{"image", image},
		{"ports", []obj{{{"name", "http"}, {"containerPort", a.port}, {"protocol", "TCP"}}}},
		{"env", []obj{{{"name", "LOG_LEVEL"}, {"value", "info"}}}},
		{"resources", obj{{"requests", obj{{"cpu", rs.cpu}, {"memory", rs.mem}}}}},
		{"volumeMounts", []obj{{{"name", vol}, {"readOnly", true}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}}},
		{"livenessProbe", obj{{"tcpSocket", obj{{"port", a.port}}}, {"initialDelaySeconds", 10},
			{"timeoutSeconds", 1}, {"periodSeconds", 10}, {"successThreshold", 1}, {"failureThreshold", 3}}},
		{"terminationMessagePath", "/dev/termination-log"},
		{"terminationMessagePolicy", "File"},
		{"imagePullPolicy", "IfNotPresent"},
	}
	spec := obj{
		{"volumes", []obj{{{"name", vol}, {"projected", obj{{"sources", []obj{
			{{"serviceAccountToken", obj{{"expirationSeconds", 3607}, {"path", "token"}}}},
			{{"configMap", obj{{"name", "kube-root-ca.crt"}, {"items", []obj{{{"key", "ca.crt"}, {"path", "ca.crt"}}}}}}},
			{{"downwardAPI", obj{{"items", []obj{{{"path", "namespace"}, {"fieldRef", obj{{"apiVersion", "v1"}, {"fieldPath", "metadata.namespace"}}}}}}}}},
		}}, {"defaultMode", 420}}}}}},
		{"containers", []obj{container}},
		{"restartPolicy", "Always"},
		{"terminationGracePeriodSeconds", 30},
		{"dnsPolicy", "ClusterFirst"},
		{"serviceAccountName", a.name},
		{"serviceAccount", a.name},
		{"nodeName", nd.name},
		{"securityContext", obj{}},
		{"schedulerName", "default-scheduler"},
		{"tolerations", []obj{
			{{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}},
			{{"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}},
		}},
		{"priority", 0},
		{"enableServiceLinks", true},
		{"preemptionPolicy", "PreemptLowerPriority"},
	}
	cond := func(t string, at time.Time) obj {
		return obj{{"type", t}, {"status", "True"}, {"lastProbeTime", nil}, {"lastTransitionTime", ts(at)}}
	}
	containerID := id.containerID
	if containerID == nil {
		containerID = "containerd://" + g.hex(64)
	}
	status := obj{
		{"phase", "Running"},
		{"conditions", []obj{cond("Initialized", scheduled), cond("Ready", ready), cond("ContainersReady", ready), cond("PodScheduled", created)}},
		{"hostIP", nd.ip},
		{"podIP", podIP},
		{"podIPs", []obj{{{"ip", podIP}}}},
		{"startTime", ts(scheduled)},
		{"containerStatuses", []obj{{
			{"name", cname},
			{"state", obj{{"running", obj{{"startedAt", ts(started)}}}}},
			{"lastState", obj{}},
			{"ready", true},
			{"restartCount", 0},
			{"image", image},
			{"imageID", a.image + "@sha256:" + rs.digest},
			{"containerID", containerID},
			{"started", true},
		}}},
		{"qosClass", "Burstable"},
	}
	return md, []field{{"spec", spec}, {"status", status}}
}

// genSecrets makes n Opaque secrets of about opts.SecretSize bytes of JSON each: four
// keys of random base64 data, different in every secret. Generated in parallel, each
// from its own seeded stream, so the result depends only on the seed.
func genSecrets(g *gen, n int) []item {
	o := g.opts
	type meta struct {
		uid     string
		created time.Time
	}
	metas := make([]meta, n)
	for i := range metas {
		metas[i] = meta{g.uid(), epoch.Add(time.Duration(g.r.IntN(30*24*3600)) * time.Second)}
	}
	const keys = 4
	per := (o.SecretSize - 1200) / keys * 3 / 4 // raw bytes per key: base64 is 4/3
	if per < 1 {
		per = 1
	}
	items := make([]item, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			buf := make([]byte, per)
			for i := range next {
				var seed [32]byte
				copy(seed[:], fmt.Sprintf("secret-%d-%d", o.Seed, i))
				r := rand.NewChaCha8(seed)
				name := fmt.Sprintf("bench-secret-%05d", i)
				data := make(obj, keys)
				for k := range data {
					_, _ = r.Read(buf)
					data[k] = field{fmt.Sprintf("payload-%d.bin", k), raw(base64.StdEncoding.EncodeToString(buf))}
				}
				var managed []obj
				if !o.NoManagedFields {
					managed = []obj{managedEntry("kubectl-client-side-apply", ts(metas[i].created), obj{
						{"f:data", fset(".", "f:payload-0.bin", "f:payload-1.bin", "f:payload-2.bin", "f:payload-3.bin")},
						{"f:metadata", obj{{"f:labels", fset(".", "f:app")}}},
						{"f:type", leaf}}, "")}
				}
				md := metaFields(name, "", g.ns(i), metas[i].uid, ts(metas[i].created),
					obj{{"app", apps[i%len(apps)].name}}, nil, nil, managed)
				items[i] = newItem("Secret", name, md, field{"data", data}, field{"type", "Opaque"})
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return items
}

var words = strings.Fields(`listen port timeout retries backoff endpoint region cache size ttl
	level format json text enabled disabled replicas threshold interval window burst limit
	upstream downstream cluster zone primary secondary feature flag rollout canary`)

// genConfigMaps makes n small ConfigMaps (about 300 B to 1 KB) of YAML-ish settings.
func genConfigMaps(g *gen, n int) []item {
	o := g.opts
	items := make([]item, n)
	for i := range items {
		a := apps[g.r.IntN(len(apps))]
		name := fmt.Sprintf("%s-config-%05d", a.name, i)
		created := epoch.Add(time.Duration(g.r.IntN(30*24*3600)) * time.Second)
		var b strings.Builder
		lines := 2 + g.r.IntN(14)
		for range lines {
			fmt.Fprintf(&b, "%s.%s: %d\n", words[g.r.IntN(len(words))], words[g.r.IntN(len(words))], g.r.IntN(100000))
		}
		data := obj{{"config.yaml", b.String()}, {"version", g.hex(8)}}
		var managed []obj
		if !o.NoManagedFields {
			managed = []obj{managedEntry("kubectl-client-side-apply", ts(created), obj{
				{"f:data", fset(".", "f:config.yaml", "f:version")},
				{"f:metadata", obj{{"f:labels", fset(".", "f:app")}}}}, "")}
		}
		md := metaFields(name, "", g.ns(i), g.uid(), ts(created), obj{{"app", a.name}}, nil, nil, managed)
		items[i] = newItem("ConfigMap", name, md, field{"data", data})
	}
	return items
}

// newGen is the generator of opts' objects: its random stream seeded from opts.Seed.
func newGen(opts Options) *gen {
	return &gen{r: rand.New(rand.NewPCG(uint64(opts.Seed), 0x6b696e666f726d65)), opts: opts}
}

// generate builds the profile's objects, sorted by namespace then name (the apiserver
// lists in key order), with resourceVersions rvBase+1.. in creation order.
func generate(opts Options) []item {
	g := newGen(opts)
	for i := range max(opts.Namespaces, 1) {
		g.nss = append(g.nss, opts.NamespaceOf(i))
	}
	var items []item
	switch opts.Profile {
	case "pods":
		items = genPods(g, opts.Objects)
	case "secrets":
		items = genSecrets(g, opts.Objects)
	case "configmaps":
		items = genConfigMaps(g, opts.Objects)
	case RealisticPods:
		items = genRealisticPods(g, opts.Objects)
	}
	for i := range items {
		items[i].rv = rvBase + 1 + int64(i)
		items[i].rvs = strconv.AppendInt(nil, items[i].rv, 10)
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := strings.Compare(a.ns, b.ns); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return items
}

// NamespaceOf is the namespace of the i-th object generated (from 0): Namespace, or with
// Namespaces above 1 the (i mod Namespaces)-th of that many namespaces, each named
// Namespace, a dash, 8 hex digits of a hash of its index, a dash and the index:
// "bench-89025cc1-1". The hex comes first because the shard hash, FNV-1a, spreads names
// that differ only at their end badly: "bench-0" … "bench-999" fall in 13 of 256 equal
// parts of the hash space, these in 252.
func (o Options) NamespaceOf(i int) string {
	ns := o.Namespace
	if ns == "" {
		ns = "bench"
	}
	if o.Namespaces <= 1 {
		return ns
	}
	j := uint64(i % o.Namespaces)
	return fmt.Sprintf("%s-%08x-%d", ns, uint32(mix64(j)), j)
}

// mix64 is splitmix64's output function: every bit of x reaches every bit of the result.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
