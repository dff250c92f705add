package main

import (
	"context"
	"slices"
	"strconv"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/object"
)

// demoCaches are the informers of the story's namespace, which the story's conditions
// and the view read. They come from the factory the controllers share when they run in
// this process, so reading them costs no list or watch of its own.
type demoCaches struct {
	ns      string
	deploys *informer.Informer[*object.Deployment]
	rss     *informer.Informer[*object.ReplicaSet]
	pods    *informer.Informer[*object.Pod]
}

func newDemoCaches(ctx context.Context, f *informer.Factory, ns string) (*demoCaches, error) {
	sel := informer.Selectors{Namespace: ns}
	c := &demoCaches{ns: ns}
	var err error
	if c.deploys, err = informer.For[*object.Deployment](ctx, f, "deployments.apps", sel); err != nil {
		return nil, err
	}
	if c.rss, err = informer.For[*object.ReplicaSet](ctx, f, "replicasets.apps", sel); err != nil {
		return nil, err
	}
	if c.pods, err = informer.For[*object.Pod](ctx, f, "pods", sel); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *demoCaches) waitForSync(ctx context.Context) error {
	return informer.WaitForSync(ctx, c.deploys, c.rss, c.pods)
}

// deployment is the story's Deployment.
func (c *demoCaches) deployment() (*object.Deployment, bool) {
	return c.deploys.Lister().Namespace(c.ns).Get(demoDeployment)
}

// owned returns the Deployment's ReplicaSets, by revision.
func (c *demoCaches) owned(d *object.Deployment) []*object.ReplicaSet {
	var out []*object.ReplicaSet
	for _, rs := range c.rss.Lister().Namespace(c.ns).List(object.Everything()) {
		if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	slices.SortFunc(out, func(a, b *object.ReplicaSet) int { return int(revisionOf(&a.ObjectMeta) - revisionOf(&b.ObjectMeta)) })
	return out
}

// dependents counts the ReplicaSets and pods of the namespace.
func (c *demoCaches) dependents() int {
	return len(c.rss.Lister().Namespace(c.ns).List(object.Everything())) + len(c.pods.Lister().Namespace(c.ns).List(object.Everything()))
}

func revisionOf(m *object.ObjectMeta) int64 {
	n, _ := strconv.ParseInt(m.Annotations["deployment.kubernetes.io/revision"], 10, 64)
	return n
}

func replicasOrZero(rs *object.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

func imageOf(t object.PodTemplateSpec) string {
	if len(t.Spec.Containers) == 0 {
		return ""
	}
	return t.Spec.Containers[0].Image()
}
