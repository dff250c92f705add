package streamserver

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/shard"
)

// RealisticPods is the profile of a multi-tenant cluster's pods (-profile realistic-pods):
// the resource served is still "pods", of kind Pod, but where the pods profile has one
// container shape in 100 ReplicaSets of 20 Deployments on 50 nodes, these look like a
// real cluster's, of any size:
//
//   - about 210 Deployments (one ReplicaSet each) in 60 namespaces, 30 named by words
//     (payments, kube-system, ingress-nginx, …) and 30 numbered (tenant-07, …), holding
//     the pods unevenly: some one or two replicas, a few hundreds of times more (weights
//     drawn log-normally, every Deployment at least one pod once there are as many pods);
//   - 1 to 4 containers per pod, the main one drawn from 18 application and
//     infrastructure specs (Go, Java, Node, Python, Ruby and .NET services, nginx, redis,
//     CoreDNS, ingress-nginx, cert-manager, …) and sidecars from 8 more: the service
//     mesh's proxy (every pod of a meshed namespace, injected as Istio does, with its
//     volumes, labels and annotations), a log shipper, three metrics exporters, a
//     database proxy, an OAuth proxy and a secrets agent; images with digests (most of
//     them), env lists of 3 to 30 entries (values, field, resource, secret and config-map
//     references), resources, probes, ports, securityContexts, volumeMounts, envFrom,
//     lifecycle hooks, affinity, topology spread, node selectors, pull secrets and
//     priority classes on some;
//   - what differs from pod to pod in a real cluster: the name's 5-character suffix, the
//     uid, the node (of 300, in 4 pools: a Deployment's pods go round its pool's nodes,
//     shuffled, as the scheduler spreads them) and its IP, the pod's IP from the node's
//     range (a /22, or more when a node holds more than 1,022 pods),
//     creation, start and condition times, containerd container IDs, restart counts and
//     the last termination of a restarting container, and the projected service-account
//     volume kube-api-access-xxxxx, named anew in every pod and mounted by each of its
//     containers; with the two default tolerations, priority and qosClass, and
//     managedFields as kube-apiserver writes them for a ReplicaSet's pod (the controller
//     manager's Update of the template's fields, the kubelet's status Update).
//
// The spec of every pod of one Deployment is its template's: the same but for the
// kube-api-access volume's name and nodeName. Members come in the order the apiserver's
// Go structs write them, maps sorted by key; container statuses are in the kubelet's
// order (by name) and carry what a 1.33 kubelet adds (resources, volumeMounts, user).
// What admission plugins and webhooks add (the mesh's sidecar, its volumes, labels and
// annotations, kube-api-access, the tolerations, priority) is not in the controller
// manager's managedFields, whose field set is computed from the template (fieldsOf).
// Pod i (from 0) is made from the seed and i alone (see rLayout): the cluster and how
// many pods each Deployment has are drawn first, the Deployments' pods then numbered in
// the order of their namespaces' names, and each pod's own values come from its index
// (name suffix, uid, volume suffix and address: bijections of it, so none repeats) and
// from a random stream seeded from the seed and it (times, container IDs, restarts). So
// the eager mode makes them in parallel (about 1.5 s per 10,000 on two cores; 13.7 KB
// of JSON per pod, 9.2 KB in protobuf), and the lazy mode (Options.Lazy, the default
// above LazyAbove pods; realistic_lazy.go) makes each as it is served, into a template
// of its Deployment with a hole for each of those values: a million pods cost the
// server a few MB and about 5 µs each to write, the same pods as the eager mode's
// (listed in index order within a namespace rather than by name). With more pods the
// Deployments only have more each: the same 60 namespaces, ~210 Deployments and 300
// nodes hold a million pods (a few thousand a node, hundreds of thousands for the
// largest Deployments).
//
// Its watch events change what a kubelet changes (see kubeletState.variant), not only the
// resourceVersion: each pod has kubeletVariants other states, pre-encoded as byte
// patches of its template (JSON, PartialObjectMetadata and, with ProtobufObjects,
// protobuf), and its k-th event carries one of them in turn (kubeletVariant).
const RealisticPods = "realistic-pods"

const (
	// kubeletVariants is how many states other than the listed one each realistic pod
	// has for its watch events.
	kubeletVariants = 3
	// realisticNow is how long after epoch the realistic cluster is looked at: its pods
	// were created before.
	realisticNow = 30 * 24 * 3600
)

// rCluster is the realistic profile's cluster: its nodes and Deployments.
type rCluster struct {
	nodes   []rNode
	pools   map[string][]int // node indexes by pool
	deploys []*rDeploy
	digests map[string]string // image digests by repository:tag
}

type rNode struct {
	name, ip, pool string
}

// rDeploy is one Deployment and its one ReplicaSet, whose template every pod follows.
type rDeploy struct {
	ns, name, role string
	hash, rsName   string
	rsUID          string
	rsCreated      int64 // seconds after epoch
	weight         float64
	system         bool
	repo, tag      string // the main container's image
	pinned         bool   // the image is named by digest too

	labels, annotations obj // the pods', sorted, the stamp annotation aside
	tmplLabels, tmplAnn obj // the template's: what the controller manager wrote
	containers          []*ctrSpec
	volumes             []obj // the volumes of the template and the injected sidecars; kube-api-access aside
	tmplVolumes         int   // volumes[:tmplVolumes] are the template's
	saName              string
	saInTemplate        bool
	podSC               obj
	nodeSelector        obj
	imagePullSecrets    []obj
	affinity            obj
	tsc                 []obj
	priorityClass       string
	priority            int
	tgps                int
	dnsConfig           obj
	pool                string  // the node pool its pods run in ("" any but the system pool)
	flaky               float64 // the share of its pods with a restarting container
	readyDelay          int     // seconds from the last container's start to ready
	qos                 string
	statusOrder         []int // container indexes sorted by name: the kubelet's order
	kcmFields           obj   // the controller manager's managedFields entry's fieldsV1
	meshed              bool
	nsHash              uint64 // shard.Hash(ns)
	pos                 int    // its index in the layout's list order (rLayout.deploys)
}

// The namespaces: those named by words (the first seven the platform's), then tenants.
var wordNamespaces = []string{"kube-system", "istio-system", "ingress-nginx", "cert-manager", "monitoring", "logging", "argocd",
	"payments", "checkout", "storefront", "catalog", "search", "identity", "billing", "notifications", "shipping", "inventory",
	"recommendations", "analytics", "data-pipeline", "ml-serving", "messaging", "media", "growth", "internal-tools",
	"platform-api", "partner-gateway", "fraud-detection", "customer-support", "reporting"}

// systemDeploy is one of the platform's Deployments.
type systemDeploy struct {
	ns, name, repo, tag string
	spec                mainSpec
	weight              float64
}

var systemDeploys = []systemDeploy{
	{"kube-system", "coredns", "", "", coreDNS, 0.1},
	{"kube-system", "metrics-server", "registry.k8s.io/metrics-server/metrics-server", "v0.7.2", controller, 0.02},
	{"istio-system", "istiod", "docker.io/istio/pilot", "1.24.2", controller, 0.1},
	{"ingress-nginx", "ingress-nginx-controller", "", "", ingressNginx, 0.1},
	{"cert-manager", "cert-manager", "quay.io/jetstack/cert-manager-controller", "v1.16.2", controller, 0.02},
	{"cert-manager", "cert-manager-cainjector", "quay.io/jetstack/cert-manager-cainjector", "v1.16.2", controller, 0.02},
	{"cert-manager", "cert-manager-webhook", "quay.io/jetstack/cert-manager-webhook", "v1.16.2", controller, 0.02},
	{"monitoring", "grafana", "", "", grafana, 0.02},
	{"monitoring", "kube-state-metrics", "registry.k8s.io/kube-state-metrics/kube-state-metrics", "v2.14.0", controller, 0.02},
	{"monitoring", "prometheus-operator", "quay.io/prometheus-operator/prometheus-operator", "v0.79.2", controller, 0.02},
	{"logging", "loki-gateway", "", "", nginxStatic, 0.03},
	{"argocd", "argocd-server", "quay.io/argoproj/argocd", "v2.13.3", controller, 0.03},
	{"argocd", "argocd-repo-server", "quay.io/argoproj/argocd", "v2.13.3", controller, 0.04},
	{"argocd", "argocd-applicationset-controller", "quay.io/argoproj/argocd", "v2.13.3", controller, 0.02},
}

// The roles of the application namespaces' Deployments, with the specs each may use.
var appRoles = []struct {
	role   string
	specs  []mainSpec
	weight float64
}{
	{"api", []mainSpec{goAPI, javaSpring, dotnetAPI, nodeAPI, pyDjango}, 2},
	{"web", []mainSpec{nodeWeb, nginxStatic, railsPuma}, 1.5},
	{"worker", []mainSpec{pyCelery, goWorker, railsSidekiq}, 1},
	{"consumer", []mainSpec{goWorker, javaSpring}, 1},
	{"grpc", []mainSpec{goGRPC}, 1.5},
	{"redis", []mainSpec{redisServer}, 0.1},
	{"gateway", []mainSpec{goAPI, nginxStatic}, 1},
	{"admin", []mainSpec{railsPuma, pyDjango}, 0.2},
	{"scheduler", []mainSpec{pyCelery}, 0.1},
	{"inference", []mainSpec{pyInference}, 0.7},
	{"webhook", []mainSpec{goAPI}, 0.3},
	{"indexer", []mainSpec{goWorker, javaSpring}, 0.6},
	{"graphql", []mainSpec{nodeAPI}, 1},
	{"sync", []mainSpec{goWorker}, 0.4},
}

// The tenants all run the one product, each its own copy of a few of its parts.
var tenantRoles = []struct {
	role string
	spec mainSpec
	repo string
}{
	{"api", goAPI, "ghcr.io/acme/saas-api"},
	{"web", nodeWeb, "ghcr.io/acme/saas-web"},
	{"worker", pyCelery, "ghcr.io/acme/saas-worker"},
	{"redis", redisServer, ""},
	{"scheduler", pyCelery, "ghcr.io/acme/saas-worker"},
}

var registries = []string{"ghcr.io/acme", "123456789012.dkr.ecr.eu-west-1.amazonaws.com", "europe-docker.pkg.dev/acme-prod/apps",
	"registry.gitlab.com/acme/platform"}

// realisticCluster draws the nodes and the Deployments.
func realisticCluster(g *gen) *rCluster {
	c := &rCluster{pools: map[string][]int{}, digests: map[string]string{}}
	seen := map[string]bool{}
	for _, p := range []struct {
		name string
		n    int
	}{{"default-pool", 170}, {"highmem-pool", 80}, {"spot-pool", 40}, {"system-pool", 10}} {
		groups := [3]string{g.hex(8), g.hex(8), g.hex(8)} // one instance group per zone
		for j := range p.n {
			name := ""
			for name == "" || seen[name] {
				name = fmt.Sprintf("gke-prod-eu1-%s-%s-%s", p.name, groups[j%3], g.suffix(4))
			}
			seen[name] = true
			i := len(c.nodes)
			c.pools[p.name] = append(c.pools[p.name], i)
			c.nodes = append(c.nodes, rNode{name: name, ip: fmt.Sprintf("10.132.%d.%d", i/250, 2+i%250), pool: p.name})
		}
	}

	tenants := g.r.Perm(64)[:30]
	slices.Sort(tenants)
	meshed := map[string]bool{}
	for _, sd := range systemDeploys {
		c.newDeploy(g, sd.ns, sd.name, "", sd.repo, sd.tag, sd.spec, sd.weight, true)
	}
	for _, ns := range wordNamespaces[7:] {
		meshed[ns] = g.r.Float64() < 0.45
		stem := ns
		if i := strings.IndexByte(ns, '-'); i > 0 {
			stem = ns[:i]
		}
		registry := pick(g, registries...)
		roles := g.r.Perm(len(appRoles))[:2+g.r.IntN(5)]
		if !slices.Contains(roles, 0) && !slices.Contains(roles, 1) {
			roles[0] = pick(g, 0, 1) // every application has an api or a web
		}
		slices.Sort(roles)
		for _, r := range roles {
			ar := appRoles[r]
			name := ar.role
			if g.r.IntN(3) > 0 {
				name = stem + "-" + ar.role
			}
			d := c.newDeploy(g, ns, name, ar.role, registry+"/"+stem+"-"+ar.role, "", pick(g, ar.specs...), ar.weight, false)
			d.meshed = meshed[ns]
		}
	}
	for _, t := range tenants {
		ns := fmt.Sprintf("tenant-%02d", t)
		mesh := g.r.Float64() < 0.4
		n := 3 + g.r.IntN(2)
		for _, tr := range tenantRoles[:n] {
			d := c.newDeploy(g, ns, tr.role, tr.role, tr.repo, "v3."+strconv.Itoa(12+g.r.IntN(3))+".0", tr.spec, 0.3, false)
			d.meshed = mesh
		}
	}
	for _, d := range c.deploys {
		c.finish(g, d)
	}
	return c
}

// newDeploy starts a Deployment: its names, times, weight and image (a drawn tag in
// repo, unless tag is given).
func (c *rCluster) newDeploy(g *gen, ns, name, role, repo, tag string, spec mainSpec, weight float64, system bool) *rDeploy {
	d := &rDeploy{ns: ns, name: name, role: role, system: system, repo: repo, tag: tag, nsHash: shard.Hash(ns)}
	d.hash = g.suffix(7 + g.r.IntN(4)) // pod-template-hash: 7 to 10 characters
	d.rsName, d.rsUID = name+"-"+d.hash, g.uid()
	d.rsCreated = int64(g.r.IntN(27 * 24 * 3600))
	if system {
		d.rsCreated = int64(g.r.IntN(24 * 3600))
	}
	d.weight = weight * math.Exp(g.r.NormFloat64()*1.4)
	if tag == "" {
		d.tag = pick(g, fmt.Sprintf("v%d.%d.%d", 1+g.r.IntN(4), g.r.IntN(40), g.r.IntN(12)),
			"sha-"+g.hex(7), fmt.Sprintf("2025.02.%02d-%s", 1+g.r.IntN(28), g.hex(6)))
	}
	d.pinned = g.r.Float64() < 0.7
	d.flaky = pick(g, 0.02, 0.05, 0.1, 0.3, 0.6)
	d.readyDelay = 2 + g.r.IntN(20)
	d.tgps = pick(g, 30, 30, 30, 60, 120)
	main := spec(c, g, d)
	d.containers = []*ctrSpec{main}
	c.deploys = append(c.deploys, d)
	return d
}

// finish adds the sidecars, the pod-level spec, the labels and annotations, and what
// follows from them (QoS class, the kubelet's container order, the controller manager's
// managedFields).
func (c *rCluster) finish(g *gen, d *rDeploy) {
	main := d.containers[0]
	if !d.system {
		slots := 3
		if d.meshed {
			slots = 2
		}
		var sidecars []func(*rCluster, *gen, *rDeploy, *ctrSpec) *ctrSpec
		isRedis := main.kind == "redis"
		if x := g.r.Float64(); isRedis && x < 0.6 || !isRedis && x < 0.2 {
			sidecars = append(sidecars, metricsExporter)
		}
		if g.r.Float64() < 0.15 && !isRedis {
			sidecars = append(sidecars, logShipper)
		}
		if g.r.Float64() < 0.12 && (d.role == "api" || d.role == "worker" || d.role == "consumer") {
			sidecars = append(sidecars, dbProxy)
		}
		if g.r.Float64() < 0.3 && (d.role == "admin" || d.ns == "internal-tools" || d.ns == "customer-support") {
			sidecars = append(sidecars, oauthProxy)
		}
		if g.r.Float64() < 0.08 && !isRedis {
			sidecars = append(sidecars, secretsAgent)
		}
		for _, add := range sidecars[:min(len(sidecars), slots)] {
			d.containers = append(d.containers, add(c, g, d, main))
		}
		if d.meshed {
			d.containers = append(d.containers, meshProxy(c, g, d, main))
		}
	}

	// Labels and annotations: the template's, then the injectors'.
	part := d.ns
	if strings.HasPrefix(part, "tenant-") {
		part = "saas"
	}
	if d.system || g.r.Float64() < 0.6 { // Helm's recommended labels
		d.tmplLabels = obj{{"app.kubernetes.io/instance", d.name}, {"app.kubernetes.io/name", d.name}, {"app.kubernetes.io/part-of", part}}
		if !d.system && g.r.IntN(2) == 0 {
			d.tmplLabels = append(d.tmplLabels, field{"app.kubernetes.io/version", strings.TrimPrefix(d.tag, "v")})
		}
		if d.role != "" {
			d.tmplLabels = append(d.tmplLabels, field{"app.kubernetes.io/component", d.role})
		}
	} else {
		d.tmplLabels = obj{{"app", d.name}, {"tier", cmp.Or(d.role, "system")}, {"team", pick(g, "core", "growth", "platform", "data", "sre")}}
	}
	d.tmplLabels = append(d.tmplLabels, field{"pod-template-hash", d.hash})
	if !d.system && g.r.Float64() < 0.3 {
		d.tmplAnn = append(d.tmplAnn, field{"prometheus.io/scrape", "true"}, field{"prometheus.io/port", "9090"}, field{"prometheus.io/path", "/metrics"})
	}
	if g.r.Float64() < 0.2 {
		d.tmplAnn = append(d.tmplAnn, field{"kubectl.kubernetes.io/restartedAt", tsu(d.rsCreated)})
	}
	if g.r.Float64() < 0.25 {
		d.tmplAnn = append(d.tmplAnn, field{"checksum/config", g.hex(64)})
	}
	if g.r.Float64() < 0.1 {
		d.tmplAnn = append(d.tmplAnn, field{"cluster-autoscaler.kubernetes.io/safe-to-evict", "true"})
	}
	d.labels, d.annotations = slices.Clone(d.tmplLabels), slices.Clone(d.tmplAnn)
	for _, s := range d.containers {
		switch s.name {
		case "istio-proxy":
			d.labels = append(d.labels, field{"security.istio.io/tlsMode", "istio"}, field{"service.istio.io/canonical-name", d.name},
				field{"service.istio.io/canonical-revision", "latest"})
			var vols []string
			for _, v := range s.volumes {
				vols = append(vols, strconv.Quote(v[0].v.(string)))
			}
			d.annotations = append(d.annotations, field{"istio.io/rev", "default"},
				field{"kubectl.kubernetes.io/default-container", main.name}, field{"kubectl.kubernetes.io/default-logs-container", main.name},
				field{"sidecar.istio.io/status", `{"initContainers":null,"containers":["istio-proxy"],"volumes":[` + strings.Join(vols, ",") +
					`],"imagePullSecrets":null,"revision":"default"}`})
			if !slices.ContainsFunc(d.annotations, func(f field) bool { return f.k == "prometheus.io/scrape" }) {
				d.annotations = append(d.annotations, field{"prometheus.io/path", "/stats/prometheus"}, field{"prometheus.io/port", "15020"},
					field{"prometheus.io/scrape", "true"})
			}
		case "vault-agent":
			tmpl := obj{{"vault.hashicorp.com/agent-inject", "true"}, {"vault.hashicorp.com/role", d.name},
				{"vault.hashicorp.com/agent-inject-secret-config", "secret/data/" + d.ns + "/" + d.name}}
			d.tmplAnn = append(d.tmplAnn, tmpl...)
			d.annotations = append(d.annotations, tmpl...)
			d.annotations = append(d.annotations, field{"vault.hashicorp.com/agent-inject-status", "injected"})
		}
	}
	for _, o := range []obj{d.tmplLabels, d.tmplAnn, d.labels, d.annotations} {
		slices.SortFunc(o, func(a, b field) int { return strings.Compare(a.k, b.k) })
	}
	if len(d.annotations) > 0 && d.annotations[0].k <= StampAnnotation {
		panic("streamserver: an annotation sorts before the stamp's: " + d.annotations[0].k)
	}

	// The pod-level spec.
	for _, s := range d.containers {
		for _, v := range s.volumes {
			if !slices.ContainsFunc(d.volumes, func(w obj) bool { return w[0].v == v[0].v }) {
				if !s.injected {
					d.volumes = slices.Insert(d.volumes, d.tmplVolumes, v)
					d.tmplVolumes++
				} else {
					d.volumes = append(d.volumes, v)
				}
			}
		}
	}
	d.saName, d.saInTemplate = "default", false
	if d.system || g.r.Float64() < 0.6 {
		d.saName, d.saInTemplate = d.name, true
	}
	switch x := g.r.Float64(); {
	case d.system:
		d.podSC = obj{{"runAsNonRoot", true}, {"seccompProfile", obj{{"type", "RuntimeDefault"}}}}
		d.nodeSelector = obj{{"kubernetes.io/os", "linux"}}
		if d.name == "coredns" {
			d.priorityClass, d.priority = "system-cluster-critical", 2000000000
		}
	case x < 0.35:
		d.podSC = obj{{"runAsUser", 1000}, {"runAsGroup", 1000}, {"runAsNonRoot", true}, {"fsGroup", 2000},
			{"seccompProfile", obj{{"type", "RuntimeDefault"}}}}
	case x < 0.5:
		d.podSC = obj{{"fsGroup", 1000}}
	}
	if d.podSC == nil {
		d.podSC = obj{}
	}
	if !d.system && g.r.Float64() < 0.1 || main.storage != "" {
		d.nodeSelector, d.pool = obj{{"cloud.google.com/gke-nodepool", "highmem-pool"}}, "highmem-pool"
	}
	if d.system {
		d.pool = "system-pool"
	}
	if g.r.Float64() < 0.25 && !d.system {
		d.imagePullSecrets = []obj{{{"name", pick(g, "ghcr-pull", "regcred", "gitlab-registry")}}}
	}
	selector := obj{{"app", d.name}} // the Deployment's selector
	if d.tmplLabels[0].k != "app" {
		selector = obj{{"app.kubernetes.io/instance", d.name}, {"app.kubernetes.io/name", d.name}}
	}
	if g.r.Float64() < 0.3 {
		d.affinity = obj{{"podAntiAffinity", obj{{"preferredDuringSchedulingIgnoredDuringExecution", []obj{{
			{"weight", 100}, {"podAffinityTerm", obj{{"labelSelector", obj{{"matchLabels", selector}}},
				{"topologyKey", "kubernetes.io/hostname"}}}}}}}}}
	}
	if g.r.Float64() < 0.2 {
		d.tsc = []obj{{{"maxSkew", 1}, {"topologyKey", "topology.kubernetes.io/zone"}, {"whenUnsatisfiable", "ScheduleAnyway"},
			{"labelSelector", obj{{"matchLabels", selector}}}}}
	}
	if !d.system && g.r.Float64() < 0.12 {
		d.priorityClass, d.priority = "high-priority", 1000000
	}
	if g.r.Float64() < 0.06 {
		d.dnsConfig = obj{{"options", []obj{{{"name", "ndots"}, {"value", "2"}}}}}
	}

	// What follows.
	d.qos = qosClass(d.containers)
	d.statusOrder = make([]int, len(d.containers))
	for i := range d.statusOrder {
		d.statusOrder[i] = i
	}
	slices.SortFunc(d.statusOrder, func(a, b int) int { return strings.Compare(d.containers[a].name, d.containers[b].name) })
	owner := obj{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", d.rsName}, {"uid", d.rsUID},
		{"controller", true}, {"blockOwnerDeletion", true}}
	tmplMeta := obj{{"generateName", d.rsName + "-"}, {"labels", d.tmplLabels}}
	if len(d.tmplAnn) > 0 {
		tmplMeta = append(tmplMeta, field{"annotations", d.tmplAnn})
	}
	tmplMeta = append(tmplMeta, field{"ownerReferences", []obj{owner}})
	d.kcmFields = obj{{"f:metadata", fieldsOf(tmplMeta)}, {"f:spec", fieldsOf(d.spec("", "", true))}}
}

// qosClass is the pod's QoS class (Guaranteed, Burstable or BestEffort) for its
// containers' resources.
func qosClass(cs []*ctrSpec) string {
	guaranteed, none := true, true
	for _, c := range cs {
		if c.req != [2]string{} || c.lim != [2]string{} {
			none = false
		}
		if c.lim[0] == "" || c.lim[1] == "" || c.req != c.lim {
			guaranteed = false
		}
	}
	switch {
	case none:
		return "BestEffort"
	case guaranteed:
		return "Guaranteed"
	}
	return "Burstable"
}

// spec is the pod spec: with template, the template's as the controller manager wrote it
// (before the admission plugins and webhooks), else the pod's on node nodeName with its
// kube-api-access volume apiVol.
func (d *rDeploy) spec(apiVol, nodeName string, template bool) obj {
	vols := d.volumes
	if template {
		vols = vols[:d.tmplVolumes]
	} else {
		vols = append(slices.Clip(vols), obj{{"name", apiVol}, {"projected", obj{{"sources", []obj{
			{{"serviceAccountToken", obj{{"expirationSeconds", 3607}, {"path", "token"}}}},
			{{"configMap", obj{{"name", "kube-root-ca.crt"}, {"items", []obj{{{"key", "ca.crt"}, {"path", "ca.crt"}}}}}}},
			{{"downwardAPI", obj{{"items", []obj{{{"path", "namespace"}, {"fieldRef", obj{{"apiVersion", "v1"}, {"fieldPath", "metadata.namespace"}}}}}}}}},
		}}, {"defaultMode", 420}}}})
	}
	var ctrs []obj
	for _, c := range d.containers {
		if !template || !c.injected {
			ctrs = append(ctrs, c.obj(apiVol))
		}
	}
	s := obj{}
	if len(vols) > 0 {
		s = append(s, field{"volumes", vols})
	}
	s = append(s, field{"containers", ctrs}, field{"restartPolicy", "Always"}, field{"terminationGracePeriodSeconds", d.tgps},
		field{"dnsPolicy", "ClusterFirst"})
	if d.nodeSelector != nil {
		s = append(s, field{"nodeSelector", d.nodeSelector})
	}
	if d.saInTemplate || !template {
		s = append(s, field{"serviceAccountName", d.saName}, field{"serviceAccount", d.saName})
	}
	if !template {
		s = append(s, field{"nodeName", nodeName})
	}
	s = append(s, field{"securityContext", d.podSC})
	if d.imagePullSecrets != nil {
		s = append(s, field{"imagePullSecrets", d.imagePullSecrets})
	}
	if d.affinity != nil {
		s = append(s, field{"affinity", d.affinity})
	}
	s = append(s, field{"schedulerName", "default-scheduler"})
	if !template {
		s = append(s, field{"tolerations", []obj{
			{{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}},
			{{"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}},
		}})
	}
	if d.priorityClass != "" {
		s = append(s, field{"priorityClassName", d.priorityClass})
	}
	if !template {
		s = append(s, field{"priority", d.priority})
	}
	if d.dnsConfig != nil {
		s = append(s, field{"dnsConfig", d.dnsConfig})
	}
	s = append(s, field{"enableServiceLinks", true})
	if !template {
		s = append(s, field{"preemptionPolicy", "PreemptLowerPriority"})
	}
	if d.tsc != nil {
		s = append(s, field{"topologySpreadConstraints", d.tsc})
	}
	return s
}

// listKeys are the keys of the pod's associative lists (+listType=map), by member name;
// every other list is atomic.
var listKeys = map[string][]string{
	"containers": {"name"}, "env": {"name"}, "volumes": {"name"}, "imagePullSecrets": {"name"},
	"volumeMounts": {"mountPath"}, "ports": {"containerPort", "protocol"}, "ownerReferences": {"uid"},
	"topologySpreadConstraints": {"topologyKey", "whenUnsatisfiable"}, "podIPs": {"ip"}, "conditions": {"type"},
}

// atomicStructs are the members whose structs are +structType=atomic (as are the items
// of imagePullSecrets and ownerReferences): a field set names them whole.
var atomicStructs = map[string]bool{"fieldRef": true, "resourceFieldRef": true, "secretKeyRef": true,
	"configMapKeyRef": true, "labelSelector": true, "imagePullSecrets": true, "ownerReferences": true}

// fieldsOf is the fieldsV1 of the members of o, as kube-apiserver writes a field set:
// "f:<name>" for each member, "." for a struct or map that is itself set, "k:{…}" for the
// items of associative lists, sorted.
func fieldsOf(o obj) obj {
	out := make(obj, 0, len(o))
	for _, f := range o {
		out = append(out, field{"f:" + f.k, fieldsValue(f.k, f.v)})
	}
	slices.SortFunc(out, func(a, b field) int { return strings.Compare(a.k, b.k) })
	return out
}

func fieldsValue(name string, v any) any {
	switch v := v.(type) {
	case obj:
		if len(v) == 0 || atomicStructs[name] {
			return leaf
		}
		return append(obj{{".", leaf}}, fieldsOf(v)...)
	case []obj:
		keys, ok := listKeys[name]
		if !ok {
			return leaf
		}
		type item struct {
			vals []any
			f    field
		}
		var items []item
		for _, x := range v {
			var vals []any
			var kb strings.Builder
			kb.WriteString("k:{")
			for i, k := range keys {
				for _, m := range x {
					if m.k == k {
						vals = append(vals, m.v)
						if i > 0 {
							kb.WriteByte(',')
						}
						switch mv := m.v.(type) {
						case int:
							fmt.Fprintf(&kb, "%q:%d", k, mv)
						default:
							fmt.Fprintf(&kb, "%q:%q", k, mv)
						}
					}
				}
			}
			kb.WriteByte('}')
			var fv any = leaf
			if !atomicStructs[name] {
				fv = append(obj{{".", leaf}}, fieldsOf(x)...)
			}
			items = append(items, item{vals, field{kb.String(), fv}})
		}
		slices.SortFunc(items, func(a, b item) int {
			for i := range a.vals {
				var c int
				switch av := a.vals[i].(type) {
				case int:
					c = cmp.Compare(av, b.vals[i].(int))
				default:
					c = strings.Compare(av.(string), b.vals[i].(string))
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
		out := obj{{".", leaf}}
		for _, it := range items {
			out = append(out, it.f)
		}
		return out
	}
	return leaf
}
